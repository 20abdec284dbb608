// Test helpers shared by the streaming suites: an event log, and rendering paced like a real-time host.
import AudioGraph
import Foundation
import Synchronization

/// Every event the engine reported, collected from its handler.
final class StreamEventLog: Sendable {
    let events = Mutex<[EngineEvent]>([])
    var all: [EngineEvent] { events.withLock { $0 } }
    /// Frames of silence the engine reported as stream underruns.
    var underrunFrames: Int {
        all.reduce(0) { if case .streamUnderrun(_, let f) = $1 { $0 + f } else { $0 } }
    }
}

/// Renders `frames` frames in paced blocks of `chunk`, each once the disk thread has buffered it, as it
/// would be in real time.
func pacedRender(_ engine: Engine, frames: Int, chunk: Int) -> [[Float]] {
    var out: [[Float]] = [[], []]
    let renderer = OfflineRenderer(engine: engine)
    var done = 0
    while done < frames {
        let n = min(chunk, frames - done)
        waitForStreams(engine, frames: n)
        let part = renderer.render(frameCount: n, hostBlockFrames: 256)
        out[0] += part[0]
        out[1] += part[1]
        done += n
        usleep(3_000)
    }
    return out
}

/// Waits (at most 2 s) until every live stream has `frames` frames buffered or has ended, as a real-time
/// host's disk thread would be ahead of a render thread that plays 1 s per second; a loaded test
/// machine must not turn into underruns.
func waitForStreams(_ engine: Engine, frames: Int) {
    let deadline = Date().addingTimeInterval(2)
    while Date() < deadline, engine.streamStatus.contains(where: { !$0.isFinished && $0.bufferedFrames < frames }) {
        usleep(500)
    }
}
