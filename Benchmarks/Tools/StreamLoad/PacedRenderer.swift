// Benchmark render thread. Calls RenderEngine.render once per period at absolute deadlines, on a
// thread of its own, as JACK calls a client's process callback; records what each call cost.
import AudioGraph
import Foundation
import StreamFixtures

/// A JACK-like driver for an engine: `periodFrames` frames every `periodFrames / sampleRate` seconds.
///
/// The thread asks for SCHED_FIFO priority 70 (what jackd gives clients with `-R`); whether it got it
/// is reported. Nothing is allocated or printed while it runs: the per-cycle figures go into arrays
/// sized before the thread starts.
final class PacedRenderer: @unchecked Sendable {
    let renderEngine: RenderEngine
    let periodFrames: Int
    let sampleRate: Double
    let cycles: Int
    /// Seconds spent inside each render call (CLOCK_MONOTONIC).
    private(set) var callSeconds: [Double]
    /// How late each call started after its deadline, in seconds.
    private(set) var wakeLateness: [Double]
    /// Calls that ended after the next period had begun: an xrun for a real driver.
    private(set) var missedDeadlines = 0
    private(set) var threadCPUSeconds = 0.0
    private(set) var isRealtime = false
    /// Largest absolute output sample, to show the engine was playing.
    private(set) var peak: Float = 0
    private let done = DispatchSemaphore(value: 0)

    init(renderEngine: RenderEngine, periodFrames: Int, sampleRate: Double, seconds: Double) {
        self.renderEngine = renderEngine
        self.periodFrames = periodFrames
        self.sampleRate = sampleRate
        cycles = Int((seconds * sampleRate / Double(periodFrames)).rounded(.up))
        callSeconds = [Double](repeating: 0, count: cycles)
        wakeLateness = [Double](repeating: 0, count: cycles)
    }

    /// Starts the render thread and returns; `wait()` blocks until it has run every cycle.
    func start() {
        let thread = Thread { [self] in
            Thread.current.name = "render"
            var parameters = sched_param(sched_priority: 70)
            isRealtime = pthread_setschedparam(pthread_self(), SCHED_FIFO, &parameters) == 0
            runCycles()
            done.signal()
        }
        thread.stackSize = 1 << 20
        thread.start()
    }

    func wait() { done.wait() }

    private func runCycles() {
        let storage = UnsafeMutablePointer<Float>.allocate(capacity: 2 * periodFrames)
        storage.initialize(repeating: 0, count: 2 * periodFrames)
        let outputs = UnsafeMutablePointer<UnsafeMutablePointer<Float>?>.allocate(capacity: 2)
        outputs[0] = storage
        outputs[1] = storage + periodFrames
        defer {
            outputs.deallocate()
            storage.deallocate()
        }
        let periodNanoseconds = Int(1e9 * Double(periodFrames) / sampleRate)
        let cpuStart = ProcessStats.threadCPUSeconds()
        var deadline = timespec()
        clock_gettime(CLOCK_MONOTONIC, &deadline)
        var loudest: Float = 0
        callSeconds.withUnsafeMutableBufferPointer { calls in
            wakeLateness.withUnsafeMutableBufferPointer { late in
                for cycle in 0..<cycles {
                    advance(&deadline, by: periodNanoseconds)
                    while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &deadline, nil) == EINTR {}
                    let begin = ProcessStats.now()
                    renderEngine.render(
                        frameCount: periodFrames, inputs: nil, inputCount: 0, outputs: UnsafePointer(outputs),
                        outputCount: 2)
                    let end = ProcessStats.now()
                    let due = Double(deadline.tv_sec) + Double(deadline.tv_nsec) / 1e9
                    calls[cycle] = end - begin
                    late[cycle] = begin - due
                    if end > due + Double(periodNanoseconds) / 1e9 { missedDeadlines += 1 }
                    for i in 0..<(2 * periodFrames) { loudest = max(loudest, abs(storage[i])) }
                }
            }
        }
        peak = loudest
        threadCPUSeconds = ProcessStats.threadCPUSeconds() - cpuStart
    }

    private func advance(_ time: inout timespec, by nanoseconds: Int) {
        let total = time.tv_nsec + nanoseconds
        time.tv_sec += total / 1_000_000_000
        time.tv_nsec = total % 1_000_000_000
    }
}
