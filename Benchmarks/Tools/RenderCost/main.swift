// Plain render-cost measurement, without package-benchmark: for each player count, renders one second
// of audio (375 × 128 frames at 48 kHz) `repeats` times through `RenderEngine.render` and prints the
// calling thread's CPU time per second of audio: in total, per player, as × real time and as a share of
// the 128-frame period (2.667 ms). Median of the repeats, best in brackets.
//
//   swift run --package-path Benchmarks -c release RenderCost [--repeats 30] [--players 1,16,64,256]
//       [--layout staggered|shared] [--volume-changes]
import AudioGraph
import RenderFixtures

#if canImport(Glibc)
    import Glibc
#endif

var repeats = 30
var counts = [1, 16, 64, 256]
var staggered = true
var volumeChanges = false
var arguments = CommandLine.arguments.dropFirst().makeIterator()
while let argument = arguments.next() {
    switch argument {
    case "--repeats": repeats = max(1, Int(arguments.next() ?? "") ?? repeats)
    case "--players": counts = (arguments.next() ?? "").split(separator: ",").compactMap { Int($0) }
    case "--layout": staggered = arguments.next() != "shared"
    case "--volume-changes": volumeChanges = true
    default:
        print("usage: RenderCost [--repeats R] [--players 1,16,64,256] [--layout staggered|shared] [--volume-changes]")
        exit(2)
    }
}

func median(_ values: [Double]) -> Double {
    let s = values.sorted()
    return s.count % 2 == 1 ? s[s.count / 2] : (s[s.count / 2 - 1] + s[s.count / 2]) / 2
}

func format(_ value: Double, _ decimals: Int) -> String {
    var text = String(Int((value * pow(10, Double(decimals))).rounded()))
    if decimals > 0 {
        while text.count <= decimals { text = "0" + text }
        text.insert(".", at: text.index(text.endIndex, offsetBy: -decimals))
    }
    return text
}

func pad(_ text: String, _ width: Int) -> String {
    String(repeating: " ", count: max(0, width - text.count)) + text
}

let periodMs = 1_000.0 * Double(RenderFixture.hostBlockFrames) / RenderFixture.sampleRate
print(
    "RenderCost: \(Int(RenderFixture.sampleRate)) Hz, \(RenderFixture.hostBlockFrames)-frame host periods "
        + "(\(RenderFixture.engineBlockFrames)-frame engine sub-blocks), 1 s of audio per repeat, \(repeats) repeats, "
        + "layout \(staggered ? "staggered" : "shared")\(volumeChanges ? ", one volume change per period (render timed alone)" : "")"
)
print("CPU = CLOCK_THREAD_CPUTIME_ID of the rendering thread; median [best] over the repeats.")
print("× real time = 1000 ms / (CPU ms per second of audio), on one core.")
print("")
let windowCost = emptyTimingWindowNanoseconds()
if volumeChanges {
    print("Render columns: CLOCK_MONOTONIC inside each render call, less the \(windowCost) ns cost of an empty timing")
    print("window; set + render: thread CPU of the whole loop (375 × engine.set + render).")
    print("")
    print("| players | render ms per s of audio | per player (ms/s) | × real time | set + render CPU ms per s |")
    print("| ---: | ---: | ---: | ---: | ---: |")
} else {
    print(
        "| players | CPU ms per s of audio | per player (ms/s) | × real time | % of 2.667 ms period | wall ms per s |")
    print("| ---: | ---: | ---: | ---: | ---: | ---: |")
}
for n in counts {
    let fixture = try RenderFixture(playerCount: n, staggered: staggered)
    let target = fixture.playerNames[n / 2]
    var cpu: [Double] = []
    var wall: [Double] = []
    for _ in 0..<repeats {
        if volumeChanges {
            var w = 0
            let c0 = threadCPUTimeNanoseconds()
            for block in 0..<RenderFixture.blocksPerSecond {
                try fixture.engine.set(target, "volume", to: RenderFixture.volumeSequence[block & 1])
                let w0 = monotonicNanoseconds()
                fixture.renderBlock()
                w += monotonicNanoseconds() - w0 - windowCost
            }
            cpu.append(Double(threadCPUTimeNanoseconds() - c0) / 1e6)
            wall.append(Double(w) / 1e6)
            fixture.engine.poll()
        } else {
            let w0 = monotonicNanoseconds()
            let c0 = threadCPUTimeNanoseconds()
            fixture.renderOneSecond()
            cpu.append(Double(threadCPUTimeNanoseconds() - c0) / 1e6)
            wall.append(Double(monotonicNanoseconds() - w0) / 1e6)
        }
    }
    if fixture.lastBlockMagnitude() == 0 { print("warning: \(n) players rendered silence") }
    if volumeChanges {
        let m = median(wall)
        let best = wall.min() ?? m
        print(
            "| \(pad(String(n), 3)) | \(format(m, 3)) [\(format(best, 3))] | \(format(m / Double(n), 4)) "
                + "[\(format(best / Double(n), 4))] | \(format(1_000.0 / m, 0))× | \(format(median(cpu), 3)) |")
    } else {
        let m = median(cpu)
        let best = cpu.min() ?? m
        let period = 100.0 * (m / Double(RenderFixture.blocksPerSecond)) / periodMs
        print(
            "| \(pad(String(n), 3)) | \(format(m, 3)) [\(format(best, 3))] | \(format(m / Double(n), 4)) "
                + "[\(format(best / Double(n), 4))] | \(format(1_000.0 / m, 0))× | \(format(period, 2)) % | \(format(median(wall), 3)) |"
        )
    }
}
