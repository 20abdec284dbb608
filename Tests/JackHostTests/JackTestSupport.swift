// Test helpers: a tone engine, an engine poller thread, an event recorder and a level probe.
import AudioGraph
import DSPTestSupport
import Foundation
import JackHost
import Synchronization

enum Tone {
    static let sampleRate = 48_000.0
    static let frequency = 1_000.0
    static let amplitude: Float = 0.5

    /// An engine whose player `p` loops one second of a 1 kHz sine (a whole number of cycles, so the
    /// loop is seamless) into `main`.
    static func makeEngine(outputChannelCount: Int = 2) throws -> Engine {
        let engine = Engine(
            configuration: EngineConfiguration(
                sampleRate: sampleRate, blockFrames: 64, outputChannelCount: outputChannelCount, inputChannelCount: 0))
        let sine = TestSignal.sine(
            frequency: frequency, sampleRate: sampleRate, frames: Int(sampleRate),
            amplitude: amplitude)
        try engine.addBuffer(SampleBuffer(name: "tone", channels: [sine], sampleRate: sampleRate))
        try engine.attach(
            .player, name: "p",
            parameters: [
                "buffer": .string("tone"), "loop": .bool(true), "playing": .bool(true)
            ])
        try engine.connect("p", to: "main")
        return engine
    }

    /// The 1 kHz amplitude the same graph produces on channel 0 without JACK (the host must not change it).
    static func offlineReferenceAmplitude() throws -> Double {
        let engine = try makeEngine()
        let output = OfflineRenderer(engine: engine).render(frameCount: 24_000, hostBlockFrames: 256)
        return amplitude(of: output[0][4_800...])
    }

    /// Goertzel amplitude at 1 kHz over the largest whole number of cycles in `samples`.
    static func amplitude(of samples: ArraySlice<Float>) -> Double {
        let period = Int(sampleRate / frequency)
        let whole = samples.count / period * period
        let slice = samples.suffix(whole)
        return Goertzel.measure(slice, frequency: frequency, sampleRate: sampleRate).amplitude
    }
}

/// Calls `engine.poll()` every 20 ms on its own thread, as an embedding layer must.
final class EnginePoller: Sendable {
    private let isStopped = Atomic<Bool>(false)
    private let finished = DispatchSemaphore(value: 0)

    init(_ engine: Engine) {
        // The thread holds `self` until `stop()`.
        let thread = Thread { [self] in
            // Relaxed: a stop request; the semaphore orders the end.
            while !self.isStopped.load(ordering: .relaxed) {
                engine.poll()
                usleep(20_000)
            }
            self.finished.signal()
        }
        thread.start()
    }

    func stop() {
        if isStopped.exchange(true, ordering: .relaxed) { return }
        finished.wait()
    }

}

/// Collects host events (thread-safe) and waits for them.
final class EventLog: Sendable {
    private let events = Mutex<[(event: JackHostEvent, time: Date)]>([])

    var handler: @Sendable (JackHostEvent) -> Void {
        { [self] event in self.events.withLock { $0.append((event, Date())) } }
    }

    var all: [JackHostEvent] { events.withLock { $0.map(\.event) } }

    func clear() { events.withLock { $0 = [] } }

    /// The first event matching `predicate` and when it arrived, waiting up to `timeout` seconds.
    func wait(timeout: Double, for predicate: (JackHostEvent) -> Bool) -> (event: JackHostEvent, time: Date)? {
        let deadline = Date().addingTimeInterval(timeout)
        repeat {
            if let hit = events.withLock({ $0.first { predicate($0.event) } }) { return hit }
            usleep(5_000)
        } while Date() < deadline
        return nil
    }
}

/// Polls `condition` every 10 ms for up to `timeout` seconds.
func waitUntil(timeout: Double, _ condition: () -> Bool) -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    repeat {
        if condition() { return true }
        usleep(10_000)
    } while Date() < deadline
    return condition()
}

/// Starts a host on `server` for `engine` whose exposed nodes' ports follow the engine's insert layout
/// (set before the start, then on every change), as `soundstage run` wires them.
func startInsertHost(_ engine: Engine, on server: PrivateJackServer, outputs: Int = 2, inputs: Int = 0) throws
    -> JackHost
{
    let host = JackHost(
        configuration: JackHostConfiguration(
            serverName: server.name, outputChannelCount: outputs, inputChannelCount: inputs),
        renderEngine: engine.renderEngine)
    host.setInserts(engine.hostInsertLayout)
    engine.setHostInsertObserver { [host] layout in host.setInserts(layout) }
    _ = try host.start()
    return host
}
