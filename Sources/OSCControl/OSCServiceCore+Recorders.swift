// OSC thread. Recorders (AVAudioRecorder) over OSC: /recorder/new, /recorder/list and
// /recorder/<name>/record|pause|stop|delete|free|status|metering|power. Files are confined to the file
// roots; stopping (which waits for the disk) runs on the worker.
import AudioFiles
import AudioGraph
import SoundstageKit

extension OSCServiceCore {
    /// `/recorder/new s:name s:node[:bus] s:path [s:key value]…` — keys `format` (wav, aiff, caf, flac,
    /// ogg, opus, mp3, m4a, aac), `encoding` (int16, int24, float32; not for the lossy formats),
    /// `quality` (0…1; lossy formats only), `metering` (1/0). A path another recorder already writes
    /// to is refused (`pathInUse`). → `/done /recorder/new s:name s:path i:channels`.
    func recorderNew(_ r: OSCRequest) throws(OSCFailure) {
        var a = OSCArguments(r)
        let name = try a.string("recorder name")
        let endpoint = try a.string("node")
        let path = try a.string("path")
        var settings = RecorderSettings()
        var metering = false
        var hasQuality = false
        while !a.isAtEnd {
            let key = try a.string("setting name")
            switch key {
            case "format":
                let text = try a.string("format")
                guard let format = AudioFileFormat(name: text) else {
                    throw OSCFailure(
                        .outOfRange,
                        "unknown format '\(OSCText.sanitized(text))' (wav, aiff, caf, flac, ogg, "
                            + "opus, mp3, m4a, alac, aac)")
                }
                settings.format = format
            case "encoding":
                let text = try a.string("encoding")
                guard let encoding = AudioSampleEncoding(rawValue: text) else {
                    throw OSCFailure(
                        .outOfRange, "unknown encoding '\(OSCText.sanitized(text))' (int16, int24, float32)")
                }
                settings.encoding = encoding
            case "quality":
                let quality = try a.double("quality")
                guard (0...1).contains(quality) else {
                    throw OSCFailure(.outOfRange, "quality \(quality) is outside 0…1")
                }
                settings.quality = quality
                hasQuality = true
            case "metering":
                metering = try a.flag("metering")
            default:
                throw OSCFailure(
                    .unknownParameter,
                    "recorders have no setting '\(OSCText.sanitized(key))' (format, encoding, quality, metering)")
            }
        }
        guard NodeName.isValid(name) else {
            throw OSCFailure(.invalidName, NodeName.refusal(OSCText.sanitized(name), what: "recorder name"))
        }
        guard recorders[name] == nil else { throw OSCFailure(.duplicateName, "a recorder named '\(name)' exists") }
        let point: BusPoint
        do {
            point = try BusPoint(parsing: endpoint)
        } catch {
            throw OSCFailure(.invalidBus, OSCText.sanitized(error.message))
        }
        if hasQuality, let format = settings.format ?? AudioFileFormat(path: path), format.isLossless {
            throw OSCFailure(
                .outOfRange,
                "quality applies only to the lossy formats (ogg, opus, mp3, m4a, aac); \(format.displayName) is "
                    + "lossless" + (format.defaultEncoding != nil ? ": 'encoding' sets its precision" : ""))
        }
        let resolved = try resolveForWriting(path)
        let destination = Recorder.destination(of: resolved)
        if let other = recorders.sorted(by: { $0.key < $1.key }).first(where: {
            Recorder.destination(of: $0.value.path) == destination
        })?.key {
            throw OSCFailure(
                .pathInUse,
                "'\(OSCText.sanitized(path))' is already the file of recorder '\(other)'; two recorders on one "
                    + "file would replace each other's takes: free '\(other)' (/recorder/\(other)/free) or choose "
                    + "another path")
        }
        let recorder: Recorder
        do {
            recorder = try Recorder(
                engine: engine, node: point.node, bus: point.bus ?? 0, path: resolved, settings: settings)
        } catch {
            // The engine's refusals keep their codes (no such node, no such bus); the rest concern the file.
            if case .engine(_, let engineError) = error { throw OSCFailure(engineError.code, error.description) }
            throw OSCFailure(.fileError, error.description)
        }
        recorder.isMeteringEnabled = metering
        let inbox = self.inbox
        recorder.setEventHandler { event in inbox.post(.recorderEvent(name: name, event)) }
        recorders[name] = recorder
        done(r.client, r.address, [.string(name), .string(path), .int32(Int32(recorder.channelCount))])
    }

    /// `/recorder/list` → `/recorder/info s:name s:node s:path i:recording f:currentTime` per recorder,
    /// then `/reply s:/recorder/list`.
    func recorderList(_ r: OSCRequest) throws(OSCFailure) {
        try OSCArguments(r).end()
        for (name, recorder) in recorders.sorted(by: { $0.key < $1.key }) {
            reply(
                r.client,
                OSCMessage(
                    "/recorder/info",
                    [
                        .string(name), .string(recorder.node), .string(recorder.path),
                        .int32(recorder.isRecording ? 1 : 0),
                        .float(Float(recorder.currentTime))
                    ]))
        }
        reply(r.client, OSCMessage("/reply", [.string("/recorder/list")]))
    }

    /// `/recorder/<name>/…`
    func recorderAddress(_ r: OSCRequest) throws(OSCFailure) {
        let rest = r.address.dropFirst("/recorder/".count)
        guard let slash = rest.firstIndex(of: "/") else {
            throw OSCFailure(.unknownAddress, "no address '\(OSCText.sanitized(r.address))'")
        }
        let name = String(rest[..<slash])
        let verb = String(rest[rest.index(after: slash)...])
        guard let recorder = recorders[name] else {
            throw OSCFailure(.unknownNode, "no recorder named '\(OSCText.sanitized(name))'")
        }
        guard let route = Self.recorderRoutes[verb] else {
            throw OSCFailure(
                .unknownAddress,
                "no address '\(OSCText.sanitized(r.address))' "
                    + "(recorders take \(Self.recorderRoutes.keys.sorted().joined(separator: ", ")))")
        }
        var a = OSCArguments(r)
        try route(self, r, &a, name, recorder)
    }

    /// A handler of `/recorder/<name>/<verb>`: the core, the request, its arguments, the name and the
    /// recorder.
    typealias RecorderRoute =
        @Sendable (OSCServiceCore, OSCRequest, inout OSCArguments, _ name: String, Recorder)
        throws(OSCFailure) -> Void

    /// The recorder verbs: the table docs/OSC.md's `/recorder/<name>/…` rows are checked against.
    static let recorderRoutes: [String: RecorderRoute] = [
        "record": { core, r, a, _, recorder throws(OSCFailure) in
            let seconds = a.isAtEnd ? nil : try a.double("duration (s)")
            try a.end()
            do {
                if let seconds {
                    guard seconds > 0, seconds <= 86_400 else {
                        throw OSCFailure(.outOfRange, "duration \(seconds) s is outside (0, 86400]")
                    }
                    try recorder.record(forDuration: seconds)
                } else {
                    try recorder.record()
                }
            } catch let failure as OSCFailure {
                throw failure
            } catch {
                throw OSCFailure(.fileError, "\(error)")
            }
            core.done(r.client, r.address)
        },
        "pause": { core, r, a, _, recorder throws(OSCFailure) in
            try a.end()
            recorder.pause()
            core.done(r.client, r.address)
        },
        "stop": { core, r, a, _, recorder throws(OSCFailure) in
            try a.end()
            core.finishTake(r, recorder)
        },
        "free": { core, r, a, name, recorder throws(OSCFailure) in
            try a.end()
            core.recorders[name] = nil
            core.finishTake(r, recorder)
        },
        "delete": { core, r, a, _, recorder throws(OSCFailure) in
            try a.end()
            do throws(RecorderError) {
                try recorder.deleteRecording()
            } catch {
                throw OSCFailure(.notAllowed, error.description)
            }
            core.done(r.client, r.address)
        },
        "status": { core, r, a, _, recorder throws(OSCFailure) in
            try a.end()
            core.reply(
                r.client,
                OSCMessage(
                    r.address,
                    [
                        .int32(recorder.isRecording ? 1 : 0), .float(Float(recorder.currentTime)),
                        .int64(Int64(recorder.recordedFrameCount)), .int32(Int32(recorder.channelCount))
                    ]))
        },
        "metering": { core, r, a, _, recorder throws(OSCFailure) in
            recorder.isMeteringEnabled = try a.flag("metering on/off")
            try a.end()
            core.done(r.client, r.address)
        },
        "power": { core, r, a, name, recorder throws(OSCFailure) in
            try a.end()
            guard recorder.isMeteringEnabled else {
                throw OSCFailure(.notAllowed, "\(name): metering is off (/recorder/\(name)/metering 1)")
            }
            recorder.updateMeters()
            let channels = recorder.channelCount
            core.reply(
                r.client,
                OSCMessage(
                    r.address,
                    [.int32(Int32(channels))]
                        + (0..<channels).map { .float(recorder.averagePower(forChannel: $0)) }
                        + (0..<channels).map { .float(recorder.peakPower(forChannel: $0)) }))
        }
    ]

    /// `stop` and `free`: the take ends on the worker (its file is closed there); `/done` carries the
    /// frames recorded.
    private func finishTake(_ r: OSCRequest, _ recorder: Recorder) {
        let client = r.client.detached
        let address = r.address
        runJob {
            recorder.stop()
            // What the file holds: a take cut by a write failure counts only the frames it kept.
            let frames = Int32(clamping: recorder.recordedFrameCount)
            return { core in core.done(client, address, [.int32(frames)]) }
        }
    }

    /// A recorder's event, to subscribers: `/recorder/finished s:name i:success` or
    /// `/recorder/error s:name s:message`.
    func handleRecorderEvent(_ name: String, _ event: RecorderEvent) {
        guard !subscriptions.byID.isEmpty else { return }
        switch event {
        case .finished(let successfully):
            notify(OSCMessage("/recorder/finished", [.string(name), .int32(successfully ? 1 : 0)]))
        case .error(let error):
            // Whole: the message names the file and says what became of the take, past any short limit.
            notify(
                OSCMessage(
                    "/recorder/error", [.string(name), .string(OSCText.sanitized(error.description, limit: 2_000))]))
        }
    }
}
