// Whole-graph render benchmarks: N looping stereo buffer players (volume 0.7, pan 0.3) → mixer → main,
// at 48 kHz with 128-frame host periods (64-frame engine sub-blocks). One iteration renders one second
// of audio (375 periods) through `RenderEngine.render`, the call JACK's process callback makes. Engine
// construction, buffer loading and 400 warm-up periods run in the benchmark's setup, outside the
// measured region (startMeasurement … stopMeasurement).
//
// * `Render_N_players`: the measured region holds the 375 render calls and nothing else.
// * `Render_N_players_volume_change`: before each period the same thread calls
//   `engine.set("p<N/2>", "volume", …)`, so every render call drains and applies one command. The
//   custom metrics cover the render calls alone; wallClock and mallocCountTotal cover set + render.
//
// Gated counts (`renderMallocCount`, `renderRetainCount`, `renderReleaseCount`) are the render thread's
// own, counted by CRenderProbe inside the render calls only. package-benchmark's retain/release and
// malloc counters are process-wide: they also count the engine's disk-streamer thread, which wakes every
// 3 ms and retains and releases (2–10 "releases" per second in the render benchmarks that were not the
// render thread's). Other limits of package-benchmark 1.38.1 with Swift 6.3 on Linux, see
// docs/benchmarks.md: no cpuTotal (10 ms ticks from /proc, and reading it allocates inside the window);
// no framework ARC metrics (its hooks stay on for the whole child process, and together with custom
// metrics they corrupted the child's results: the Swift 6.3 runtime-hook bug, ordo-one/benchmark#349).
//
// Benchmark names carry no spaces or slashes: 1.38.1 writes threshold files with those replaced by "_"
// but reads them back under the raw name, so such a benchmark would never find its thresholds.
import AudioGraph
import Benchmark
import CRenderProbe
import MallocInterposerSwift
import RenderFixtures

#if canImport(Glibc)
    import Glibc
#endif

let playerCounts = [1, 16, 64, 256]

/// Render thread's own mallocs, retains and releases inside the render calls (gated).
let renderMallocs = BenchmarkMetric.custom("renderMallocCount", polarity: .prefersSmaller, useScalingFactor: false)
let renderRetains = BenchmarkMetric.custom("renderRetainCount", polarity: .prefersSmaller, useScalingFactor: false)
let renderReleases = BenchmarkMetric.custom("renderReleaseCount", polarity: .prefersSmaller, useScalingFactor: false)
/// Thread CPU time of the measured loop, in µs (plain: the render calls; volume change: set + render).
let loopCPU = BenchmarkMetric.custom("threadCPU_us", polarity: .prefersSmaller, useScalingFactor: false)
/// Volume-change benchmarks: CLOCK_MONOTONIC inside the 375 render calls alone, less the calibrated cost
/// of an empty timing window, in µs.
let renderWall = BenchmarkMetric.custom("renderWall_us", polarity: .prefersSmaller, useScalingFactor: false)

/// mallocCountTotal (process-wide, not gated) is requested because the interposer counts, and calls the
/// probe's allocation hook, only while package-benchmark has a malloc metric on.
let metrics: [BenchmarkMetric] = [.wallClock, loopCPU, .mallocCountTotal, renderMallocs, renderRetains, renderReleases]

/// Holds a fixture between a benchmark's setup and its iterations.
final class FixtureBox: @unchecked Sendable {
    var fixture: RenderFixture?
    /// Cost of an empty timing window, in ns.
    var windowCost = 0
}

/// Counts of one measured loop.
struct ProbeCounts {
    var mallocs: Int64 = 0
    var retains: Int64 = 0
    var releases: Int64 = 0

    /// Runs `body` inside a probe window on this thread and adds what it did.
    @inline(__always)
    mutating func measure(_ body: () -> Void) {
        render_probe_begin()
        let m0 = render_probe_mallocs()
        let r0 = render_probe_retains()
        let d0 = render_probe_releases()
        body()
        let d1 = render_probe_releases()
        let r1 = render_probe_retains()
        let m1 = render_probe_mallocs()
        render_probe_end()
        mallocs &+= m1 &- m0
        retains &+= r1 &- r0
        releases &+= d1 &- d0
    }

    func record(in benchmark: Benchmark) {
        benchmark.measurement(renderMallocs, Int(mallocs))
        benchmark.measurement(renderRetains, Int(retains))
        benchmark.measurement(renderReleases, Int(releases))
    }
}

func installAllocationHook() { MallocInterposerSwift.setAllocationHook(render_probe_allocation_hook) }
func removeAllocationHook() { MallocInterposerSwift.setAllocationHook(nil) }

final class Token {}

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: metrics,
        timeUnits: .microseconds,
        warmupIterations: 3,
        scalingFactor: .one,
        maxDuration: .seconds(3),
        maxIterations: 1_000
    )

    for n in playerCounts {
        let box = FixtureBox()
        Benchmark(
            "Render_\(n)_players",
            closure: { benchmark in
                guard let fixture = box.fixture else { return benchmark.error("no fixture") }
                var counts = ProbeCounts()
                benchmark.startMeasurement()
                let start = threadCPUTimeNanoseconds()
                counts.measure { fixture.renderOneSecond() }
                let cpu = threadCPUTimeNanoseconds() &- start
                benchmark.stopMeasurement()
                benchmark.measurement(loopCPU, cpu / 1_000)
                counts.record(in: benchmark)
                blackHole(fixture.lastBlockMagnitude())
            },
            setup: {
                box.fixture = try RenderFixture(playerCount: n)
                installAllocationHook()
            },
            teardown: {
                removeAllocationHook()
                box.fixture = nil
            }
        )

        let changeBox = FixtureBox()
        Benchmark(
            "Render_\(n)_players_volume_change",
            configuration: .init(
                metrics: metrics + [renderWall],
                timeUnits: .microseconds,
                warmupIterations: 3,
                scalingFactor: .one,
                maxDuration: .seconds(3),
                maxIterations: 1_000
            ),
            closure: { benchmark in
                guard let fixture = changeBox.fixture else { return benchmark.error("no fixture") }
                let engine = fixture.engine
                let target = fixture.playerNames[n / 2]
                let volumes = RenderFixture.volumeSequence
                let windowCost = changeBox.windowCost
                var wall = 0
                var counts = ProbeCounts()
                var failure: (any Error)?
                benchmark.startMeasurement()
                let loopStart = threadCPUTimeNanoseconds()
                for block in 0..<RenderFixture.blocksPerSecond {
                    do {
                        try engine.set(target, "volume", to: volumes[block & 1])
                    } catch {
                        failure = error
                    }
                    counts.measure {
                        let t0 = monotonicNanoseconds()
                        fixture.renderBlock()
                        wall &+= monotonicNanoseconds() &- t0 &- windowCost
                    }
                }
                let loopCPUTime = threadCPUTimeNanoseconds() &- loopStart
                benchmark.stopMeasurement()
                if let failure { benchmark.error("engine.set failed: \(failure)") }
                benchmark.measurement(loopCPU, loopCPUTime / 1_000)
                benchmark.measurement(renderWall, max(0, wall) / 1_000)
                counts.record(in: benchmark)
                blackHole(fixture.lastBlockMagnitude())
            },
            setup: {
                changeBox.fixture = try RenderFixture(playerCount: n)
                changeBox.windowCost = emptyTimingWindowNanoseconds()
                installAllocationHook()
            },
            teardown: {
                removeAllocationHook()
                changeBox.fixture?.engine.poll()
                changeBox.fixture = nil
            }
        )
    }

    // Counter check: a probe window around a body that deliberately mallocs and retains 375 times, while
    // an engine (with its disk thread) is alive, so a 0 above means "nothing happened", not "nothing was
    // counted". Its thresholds must stay at 375.
    let tokens = TokenSlots()
    let checkBox = FixtureBox()
    Benchmark(
        "Counter_check_375_mallocs_375_retains",
        configuration: .init(
            metrics: [.mallocCountTotal, renderMallocs, renderRetains, renderReleases], warmupIterations: 3,
            scalingFactor: .one, maxDuration: .seconds(1), maxIterations: 100),
        closure: { benchmark in
            let token = Token()
            tokens.reset(count: RenderFixture.blocksPerSecond)
            var counts = ProbeCounts()
            benchmark.startMeasurement()
            counts.measure {
                for i in 0..<RenderFixture.blocksPerSecond {
                    tokens.store(token, at: i)
                    tokens.allocateAndFree()
                }
            }
            benchmark.stopMeasurement()
            counts.record(in: benchmark)
            tokens.reset(count: 0)
        },
        setup: {
            checkBox.fixture = try RenderFixture(playerCount: 1)
            installAllocationHook()
        },
        teardown: {
            removeAllocationHook()
            checkBox.fixture = nil
        }
    )
}

/// Preallocated slots for the counter check, so storing a reference retains but never allocates.
final class TokenSlots: @unchecked Sendable {
    private var slots = UnsafeMutablePointer<Token?>.allocate(capacity: 1)
    private var count = 0

    func reset(count newCount: Int) {
        slots.deinitialize(count: count)
        slots.deallocate()
        slots = .allocate(capacity: max(1, newCount))
        slots.initialize(repeating: nil, count: newCount)
        count = newCount
    }

    /// Stores `token` (one retain).
    @inline(never)
    func store(_ token: Token, at index: Int) {
        slots[index] = token
    }

    /// One malloc and one free the optimizer cannot remove.
    @inline(never)
    func allocateAndFree() {
        let p = malloc(64)
        blackHole(p)
        free(p)
    }
}
