// OSC thread. System sounds (/sound/play) and the player schedule queue (/node/<name>/enqueue).
import AudioGraph

extension OSCServiceCore {
    /// `/sound/play s:buffer [f:volume] [f:pan]` → `/done /sound/play i:id`; subscribers later get
    /// `/sound/finished i:id i:completed h:sampleTime`.
    func soundPlay(_ r: OSCRequest) throws(OSCFailure) {
        var a = OSCArguments(r)
        let buffer = try a.string("buffer name")
        let volume = a.isAtEnd ? 1 : try number(&a, "volume")
        let pan = a.isAtEnd ? 0 : try number(&a, "pan")
        try a.end()
        let id = try engineCall { () throws(EngineError) in try engine.playSound(buffer, volume: volume, pan: pan) }
        done(r.client, r.address, [.int32(Int32(truncatingIfNeeded: id))])
    }

    /// `/node/<name>/enqueue s:buffer [s:options] [h:startFrame] [h:frameCount] [h:playerTime]` →
    /// `/done /node/<name>/enqueue i:itemID`. Options (comma-separated): `loops`, `interrupts`,
    /// `interruptsAtLoop`, and one completion kind `dataConsumed` | `dataRendered` | `dataPlayedBack`
    /// (subscribers then get `/player/completed s:node i:itemID s:kind i:completed h:sampleTime`).
    func enqueue(_ r: OSCRequest, node: String, frame: Int64?) throws(OSCFailure) {
        var a = OSCArguments(r)
        let buffer = try a.string("buffer name")
        let optionText = try a.optionalString("options") ?? ""
        let start = try a.optionalInteger("start frame") ?? 0
        let count = try a.optionalInteger("frame count")
        let playerTime = try a.optionalInteger("player time")
        try a.end()
        var options: PlayerScheduleOptions = []
        var completion: CompletionKind?
        for word in optionText.split(whereSeparator: { $0 == "," || $0 == " " || $0 == "|" }) {
            switch String(word) {
            case "loop", "loops": options.insert(.loops)
            case "interrupts": options.insert(.interrupts)
            case "interruptsAtLoop": options.insert(.interruptsAtLoop)
            case "dataConsumed": completion = .dataConsumed
            case "dataRendered": completion = .dataRendered
            case "dataPlayedBack": completion = .dataPlayedBack
            default:
                throw a.failure(
                    "unknown option '\(OSCText.sanitized(String(word)))' (supported: loops, interrupts, "
                        + "interruptsAtLoop, dataConsumed, dataRendered, dataPlayedBack)")
            }
        }
        guard start >= 0, start <= Int64(Int32.max), (count ?? 1) >= 1, (count ?? 1) <= Int64(Int32.max) else {
            throw OSCFailure(.outOfRange, "start must be 0…\(Int32.max) and the frame count 1…\(Int32.max)")
        }
        let id = try engineCall { () throws(EngineError) in
            try engine.scheduleBuffer(
                node, buffer: buffer, startFrame: Int(start), frameCount: count.map { Int($0) },
                atPlayerTime: playerTime, options: options, completion: completion,
                atSampleTime: frame)
        }
        done(r.client, r.address, [.int32(id)])
    }

    private func number(_ a: inout OSCArguments, _ what: String) throws(OSCFailure) -> Double {
        let argument = try a.any(what)
        guard let value = argument.parameterValue?.doubleValue, argument.parameterValue?.stringValue == nil else {
            throw a.failure("\(what) must be a number")
        }
        return value
    }

    /// Notifications for sounds, schedule completions and streams (to subscribers).
    func handleScheduleEvent(_ event: EngineEvent) {
        switch event {
        case .soundFinished(let id, let time, let completed):
            notify(
                OSCMessage(
                    "/sound/finished", [.int32(Int32(truncatingIfNeeded: id)), .int32(completed ? 1 : 0), .int64(time)])
            )
        case .scheduleCompleted(let node, let id, let kind, let time, let completed):
            notify(
                OSCMessage(
                    "/player/completed",
                    [
                        .string(node), .int32(id), .string(kind.rawValue),
                        .int32(completed ? 1 : 0), .int64(time)
                    ]))
        case .streamUnderrun(let path, let frames):
            notify(OSCMessage("/stream/underrun", [.string(path), .int32(Int32(clamping: frames))]))
        case .streamFailed(let path, let message):
            notify(OSCMessage("/stream/failed", [.string(path), .string(message)]))
        default:
            break
        }
    }
}
