// OSC thread (handlers) and worker queue (decoding, patch files). /buffer/* and /patch/*: every path is
// confined to the file roots; blocking work runs on the worker and completes with /done or /error.
import AudioFiles
import AudioGraph
import Foundation
import SoundstageKit

extension OSCServiceCore {
    /// `/buffer/load s:name s:path [h:startFrame] [h:frameCount]` → (worker: decode, convert to the engine
    /// rate) → (OSC thread: add to the engine) → `/done /buffer/load s:name i:frames i:channels f:rate`.
    /// Start and count are in the file's own frames.
    func bufferLoad(_ r: OSCRequest) throws(OSCFailure) {
        var a = OSCArguments(r)
        let name = try a.string("buffer name")
        let path = try a.string("path")
        let start = try a.optionalInteger("start frame")
        let count = try a.optionalInteger("frame count")
        try a.end()
        guard NodeName.isValidBufferName(name) else {
            throw OSCFailure(.invalidName, NodeName.refusal(OSCText.sanitized(name), what: "buffer name"))
        }
        guard (start ?? 0) >= 0, (count ?? 1) >= 1, (start ?? 0) <= Int64(Int32.max), (count ?? 1) <= Int64(Int32.max)
        else {
            throw OSCFailure(.outOfRange, "start must be ≥ 0 and the frame count ≥ 1")
        }
        let resolved = try resolve(path)
        let rate = engine.configuration.sampleRate
        let client = r.client.detached
        let files = self.files
        bufferLoadsInFlight[name, default: 0] += 1
        runJob {
            // Its origin goes into saved patches, so a buffer loaded over OSC is loaded again with the patch.
            let buffer: SampleBuffer
            do throws(AudioFileError) {
                buffer = try files.decodeBuffer(
                    named: name, path: resolved, startFrame: Int(start ?? 0),
                    frameCount: count.map { Int($0) })
            } catch {
                let failure = OSCFailure(.fileError, "\(error)")
                return { core in
                    core.bufferLoadFinished(name)
                    core.sendError(client, address: "/buffer/load", failure)
                }
            }
            guard buffer.channelCount > 0, buffer.frameCount > 0 else {
                let failure = OSCFailure(.bufferMismatch, "'\(path)' holds no audio")
                return { core in
                    core.bufferLoadFinished(name)
                    core.sendError(client, address: "/buffer/load", failure)
                }
            }
            return { core in
                core.bufferLoadFinished(name)
                do throws(EngineError) {
                    try core.engine.addBuffer(buffer)
                    core.done(
                        client, "/buffer/load",
                        [
                            .string(name), .int32(Int32(clamping: buffer.frameCount)),
                            .int32(Int32(buffer.channelCount)),
                            .float(Float(rate))
                        ])
                } catch {
                    core.sendError(client, address: "/buffer/load", OSCFailure(error))
                }
            }
        }
    }

    private func bufferLoadFinished(_ name: String) {
        let left = bufferLoadsInFlight[name, default: 1] - 1
        bufferLoadsInFlight[name] = left > 0 ? left : nil
    }

    /// `/buffer/free s:name` → `/done /buffer/free s:name`. While a `/buffer/load` of that name is on the
    /// worker, the free is sequenced behind it (a job of its own, answered when it runs), so "load, then
    /// free" leaves no buffer, as sent, instead of freeing what was there and then installing the load.
    func bufferFree(_ r: OSCRequest) throws(OSCFailure) {
        var a = OSCArguments(r)
        let name = try a.string("buffer name")
        try a.end()
        guard bufferLoadsInFlight[name, default: 0] > 0 else {
            try engineCall { () throws(EngineError) in try engine.removeBuffer(name) }
            done(r.client, "/buffer/free", [.string(name)])
            return
        }
        let client = r.client.detached
        runJob {
            { core in
                do throws(EngineError) {
                    try core.engine.removeBuffer(name)
                    core.done(client, "/buffer/free", [.string(name)])
                } catch {
                    core.sendError(client, address: "/buffer/free", OSCFailure(error))
                }
            }
        }
    }

    /// `/buffer/list` → `/buffer/info s:name i:channels i:frames f:rate` per buffer, then `/reply s:/buffer/list`.
    func bufferList(_ r: OSCRequest) throws(OSCFailure) {
        try OSCArguments(r).end()
        for b in engine.buffers() {
            reply(
                r.client,
                OSCMessage(
                    "/buffer/info",
                    [
                        .string(b.name), .int32(Int32(b.channelCount)), .int32(Int32(clamping: b.frameCount)),
                        .float(Float(b.sampleRate))
                    ]))
        }
        reply(r.client, OSCMessage("/reply", [.string("/buffer/list")]))
    }

    /// `/patch/load s:path [s:replace|diff]` — replaces the graph (worker: parse, decode, check; then one
    /// batch), or with `diff` brings it to the patch as a hot reload does (what stays keeps playing) →
    /// `/done /patch/load s:path`, or `/error /patch/load 67 "…every problem…"` with the graph unchanged.
    func patchLoad(_ r: OSCRequest) throws(OSCFailure) {
        var a = OSCArguments(r)
        let path = try a.string("path")
        let mode = try a.optionalString("mode") ?? "replace"
        try a.end()
        guard mode == "replace" || mode == "diff" else {
            throw a.failure("mode must be 'replace' or 'diff', not '\(OSCText.sanitized(mode))'")
        }
        let resolved = try resolve(path)
        let files = self.files
        let client = r.client.detached
        runJob {
            do throws(PatchLoadError) {
                let warnings =
                    mode == "diff" ? try files.reloadPatch(path: resolved) : try files.applyPatch(path: resolved)
                return { core in
                    core.mirror.dirty = true
                    // A file that could not be read: an /error each, and the rest of the patch is loaded.
                    for warning in warnings {
                        core.sendError(
                            client, address: "/patch/load",
                            OSCFailure(.fileError, Self.limit(warning.description, bytes: 1200)))
                    }
                    core.done(client, "/patch/load", [.string(path)])
                }
            } catch {
                let failure = OSCFailure(.patchError, Self.limit(error.description, bytes: 1200))
                return { core in
                    core.mirror.dirty = true
                    core.sendError(client, address: "/patch/load", failure)
                }
            }
        }
    }

    /// `/patch/save s:path` — writes the running graph, with the JACK connections of our ports (those the host will restore included), as a patch (`OutputDestination`: replaced when complete, devices written through) → `/done /patch/save s:path`. During an interruption, the players it will resume are written playing.
    func patchSave(_ r: OSCRequest) throws(OSCFailure) {
        var a = OSCArguments(r)
        let path = try a.string("path")
        try a.end()
        let resolved = try resolveForWriting(path, allowsFIFO: true)
        let files = self.files
        let client = r.client.detached
        // The host's connections are read here (JACK calls belong to this thread), written by the job:
        // those it will restore too, so a save while the server is lost keeps them.
        let jack = PatchSnapshot.jackSettings(
            connections: host?.savedConnections() ?? [], clientName: host?.status().clientName)
        runJob {
            // A FIFO is written only once a program reads it (waited for at most 5 s): the worker that
            // serves every client's file requests never waits for a reader that does not come.
            let reader: FIFOReader
            do throws(OSCFailure) {
                reader = try FIFOReader(path: resolved, shownAs: path, seconds: 5)
            } catch {
                return { core in core.sendError(client, address: "/patch/save", error) }
            }
            defer { reader.release() }
            do throws(AudioFileError) {
                try files.savePatch(to: resolved, jack: jack)
                return { core in core.done(client, "/patch/save", [.string(path)]) }
            } catch {
                let failure = OSCFailure(.patchError, error.description.replacingOccurrences(of: resolved, with: path))
                return { core in core.sendError(client, address: "/patch/save", failure) }
            }
        }
    }

    /// `text` cut to at most `bytes` UTF-8 bytes (replies must fit a datagram).
    static func limit(_ text: String, bytes: Int) -> String {
        guard text.utf8.count > bytes else { return text }
        var out = ""
        for ch in text {
            if out.utf8.count + ch.utf8.count > bytes - 3 { break }
            out.append(ch)
        }
        return out + "…"
    }
}
