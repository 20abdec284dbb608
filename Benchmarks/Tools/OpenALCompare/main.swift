// OpenALCompare: Soundstage's `environment` node against OpenAL Soft, side by side in one process.
//
// For each N (default 1, 16, 64, 256) both engines play the same N looping mono sources (a 4 s buffer,
// each source starting at its own offset) at 48 kHz and render 128-frame blocks of float stereo; before
// every block every source moves along a circle of radius 2 m round the listener (N sources evenly
// spaced, 0.5 revolutions per second, a slight elevation). Measured per configuration:
//   - update: the calls that move the sources (OpenAL: alSource3f between alDeferUpdatesSOFT and
//     alProcessUpdatesSOFT; Soundstage: one engine.moveSources call, or with --by-name also
//     engine.setVector per source inside one engine.batch), wall time;
//   - render: the render calls (alcRenderSamplesSOFT; RenderEngine.render), wall time;
//   - total: the thread's CPU time (CLOCK_THREAD_CPUTIME_ID) over the whole second.
// Each repeat renders one second of audio per configuration, the configurations taking turns so they see
// the same machine load; the tables give medians. Positions are precomputed (no trigonometry inside the
// timed region). OpenAL Soft does its per-source work (HRTF coefficients, gains) inside the render call;
// Soundstage does it in the update (control side) and glides on the render side.
//
//   swift run --package-path Benchmarks -c release OpenALCompare [--sources 1,16,64,256] [--repeats 9]
//       [--revolutions 0.5] [--engine-block 128] [--only openal|soundstage] [--hq] [--by-name]
import AudioGraph
import RenderFixtures

#if canImport(Glibc)
    import Glibc
#endif

protocol Scene: AnyObject {
    var name: String { get }
    var sourceCount: Int { get }
    /// Moves every source; `positions` holds x, y, z per source.
    func update(positions: UnsafePointer<Float>)
    /// Renders one block.
    func render()
    func lastBlockPower() -> Double
    /// Untimed housekeeping between measured seconds.
    func poll()
    /// Makes the scene's context current (OpenAL's current context is process-wide).
    func activate()
}

extension Scene {
    func activate() {}
}

struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Distinct start frames, so N sources read different memory (as in RenderFixture).
enum Stagger {
    static func startFrame(_ index: Int, frames: Int) -> Int { (index &* 7_919) % (frames / 2) }
}

// MARK: Options

var sourceCounts = [1, 16, 64, 256]
var repeats = 9
var revolutionsPerSecond = 0.5
var engineBlockFrames = 128
var systems: Set<String> = ["openal", "soundstage"]
var includeHQ = false
var includeByName = false
var arguments = CommandLine.arguments.dropFirst().makeIterator()
while let argument = arguments.next() {
    switch argument {
    case "--sources": sourceCounts = (arguments.next() ?? "").split(separator: ",").compactMap { Int($0) }
    case "--repeats": repeats = max(1, Int(arguments.next() ?? "") ?? repeats)
    case "--revolutions": revolutionsPerSecond = Double(arguments.next() ?? "") ?? revolutionsPerSecond
    case "--engine-block": engineBlockFrames = max(1, Int(arguments.next() ?? "") ?? engineBlockFrames)
    case "--only": systems = [arguments.next() ?? ""]
    case "--hq": includeHQ = true
    case "--by-name": includeByName = true
    default:
        print(
            "usage: OpenALCompare [--sources 1,16,64,256] [--repeats R] [--revolutions RPS] [--engine-block F] "
                + "[--only openal|soundstage] [--hq] [--by-name]")
        exit(2)
    }
}

let sampleRate = 48_000
let blockFrames = 128
let blocksPerSecond = sampleRate / blockFrames
let radius: Float = 2

/// 4 s of mono signal: two tones and a little noise, peak about 0.5.
func makeSignal() -> [Float] {
    var seed: UInt64 = 0x9E37_79B9_7F4A_7C15
    return (0..<(4 * sampleRate)).map { i in
        seed ^= seed << 13
        seed ^= seed >> 7
        seed ^= seed << 17
        let t = Double(i) / Double(sampleRate)
        let noise = Double(seed >> 11) / Double(1 << 53) - 0.5
        return Float(0.25 * sin(2 * Double.pi * 330 * t) + 0.15 * sin(2 * Double.pi * 1_210 * t) + 0.1 * noise)
    }
}

/// Positions for one revolution, block by block: `table[block][3 * source + axis]`.
@MainActor
func positionTable(sourceCount: Int) -> (table: UnsafeMutablePointer<Float>, blocks: Int) {
    let blocks = max(1, Int((Double(blocksPerSecond) / max(revolutionsPerSecond, 1e-3)).rounded()))
    let table = UnsafeMutablePointer<Float>.allocate(capacity: blocks * 3 * sourceCount)
    for b in 0..<blocks {
        for i in 0..<sourceCount {
            let angle = 2 * Double.pi * (Double(i) / Double(sourceCount) + Double(b) / Double(blocks))
            let p = table + (b * sourceCount + i) * 3
            p[0] = radius * Float(sin(angle))
            p[1] = 0.3
            p[2] = -radius * Float(cos(angle))
        }
    }
    return (table, blocks)
}

/// One measured second: update and render wall time, thread CPU time (nanoseconds).
struct Second {
    var update = 0
    var render = 0
    var cpu = 0
}

final class Runner {
    let scene: Scene
    let table: UnsafeMutablePointer<Float>
    let tableBlocks: Int
    var block = 0
    var seconds: [Second] = []

    init(scene: Scene, table: UnsafeMutablePointer<Float>, tableBlocks: Int) {
        self.scene = scene
        self.table = table
        self.tableBlocks = tableBlocks
    }

    /// One second of audio (375 blocks), each block preceded by a move of every source.
    func runSecond(record: Bool) {
        scene.activate()
        let n = scene.sourceCount
        var second = Second()
        let cpuStart = threadCPUTimeNanoseconds()
        for _ in 0..<blocksPerSecond {
            let positions = UnsafePointer(table + (block % tableBlocks) * 3 * n)
            let t0 = monotonicNanoseconds()
            scene.update(positions: positions)
            let t1 = monotonicNanoseconds()
            scene.render()
            let t2 = monotonicNanoseconds()
            second.update &+= t1 &- t0 &- emptyWindow
            second.render &+= t2 &- t1 &- emptyWindow
            block &+= 1
        }
        second.cpu = threadCPUTimeNanoseconds() &- cpuStart
        scene.poll()
        if record { seconds.append(second) }
    }

    static func median(_ values: [Int]) -> Double {
        let sorted = values.sorted()
        return sorted.isEmpty ? .nan : Double(sorted[sorted.count / 2])
    }

    /// Medians in ms of CPU per second of audio.
    var update: Double { Self.median(seconds.map(\.update)) / 1e6 }
    var render: Double { Self.median(seconds.map(\.render)) / 1e6 }
    var cpu: Double { Self.median(seconds.map(\.cpu)) / 1e6 }
}

let emptyWindow = emptyTimingWindowNanoseconds()
let signal = makeSignal()

func format(_ value: Double, _ digits: Int = 3) -> String {
    guard value.isFinite else { return "–" }
    var scale = 1.0
    for _ in 0..<digits { scale *= 10 }
    let rounded = (value * scale).rounded() / scale
    return "\(rounded)"
}

func decibels(_ power: Double) -> String { power > 0 ? format(10 * log10(power), 1) : "-inf" }

print(
    "OpenALCompare: 48 kHz, \(blockFrames)-frame blocks (Soundstage engine sub-block \(engineBlockFrames)), "
        + "sources on a 2 m circle at \(revolutionsPerSecond) rev/s, moved before every block; "
        + "\(repeats) repeats of 1 s, medians; ms = ms of CPU per second of audio.")
print("")

struct Row {
    var name: String
    var sources: Int
    var update: Double
    var render: Double
    var cpu: Double
}

var rows: [Row] = []
var notes: [String] = []

for n in sourceCounts {
    let (table, tableBlocks) = positionTable(sourceCount: n)
    defer { table.deallocate() }
    var runners: [Runner] = []
    do {
        if systems.contains("openal") {
            for hrtf in [true, false] {
                let scene = try OpenALScene(
                    hrtf: hrtf, sourceCount: n, signal: signal, sampleRate: sampleRate,
                    blockFrames: blockFrames)
                if n == sourceCounts.first {
                    notes.append(
                        "\(scene.name): ALC_HRTF_STATUS_SOFT = \(scene.hrtfStatus), HRTF \"\(scene.hrtfName)\"")
                }
                runners.append(Runner(scene: scene, table: table, tableBlocks: tableBlocks))
            }
        }
        if systems.contains("soundstage") {
            var configurations = [("HRTF", false), ("equalPowerPanning", false)]
            if includeHQ { configurations.append(("HRTFHQ", false)) }
            if includeByName { configurations += [("HRTF", true), ("equalPowerPanning", true)] }
            for (algorithm, byName) in configurations {
                let scene = try SoundstageScene(
                    algorithm: algorithm, sourceCount: n, signal: signal,
                    sampleRate: sampleRate, blockFrames: blockFrames,
                    engineBlockFrames: engineBlockFrames, byName: byName)
                runners.append(Runner(scene: scene, table: table, tableBlocks: tableBlocks))
            }
        }
    } catch {
        print("set-up failed for N = \(n): \(error)")
        exit(1)
    }
    for runner in runners { runner.runSecond(record: false) }
    for _ in 0..<repeats {
        for runner in runners { runner.runSecond(record: true) }
    }
    for runner in runners {
        rows.append(
            Row(
                name: runner.scene.name, sources: n, update: runner.update, render: runner.render,
                cpu: runner.cpu))
        if n == sourceCounts.first {
            notes.append(
                "\(runner.scene.name), N = \(n): output level \(decibels(runner.scene.lastBlockPower())) dB (mean square)"
            )
        }
    }
    runners.removeAll()
}

for note in notes { print(note) }
print("")
print("| configuration | N | update ms | render ms | thread CPU ms | per source: update | render | total |")
print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
for r in rows {
    let n = Double(r.sources)
    print(
        "| \(r.name) | \(r.sources) | \(format(r.update)) | \(format(r.render)) | \(format(r.cpu)) | "
            + "\(format(r.update / n, 4)) | \(format(r.render / n, 4)) | \(format(r.cpu / n, 4)) |")
}

@MainActor
func row(_ name: String, _ n: Int) -> Row? { rows.first { $0.name == name && $0.sources == n } }

if systems.count == 2 {
    print("")
    print(
        "Ratios, Soundstage / OpenAL Soft per source (render = render calls only; total = thread CPU, "
            + "updates included). Targets: HRTF total ≤ 0.5 × OpenAL HRTF; equal power ≤ OpenAL without HRTF.")
    print("")
    print(
        "| N | OpenAL HRTF ms/src | OpenAL no-HRTF ms/src | HRTF render / control ms/src | HRTF ratio render / total "
            + "| equal-power render / control ms/src | equal-power ratio render / total | HRTF total, % of one core |")
    print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for suffix in ["", " (setVector)"] {
        for n in sourceCounts {
            guard let oh = row("OpenAL Soft, HRTF", n), let op = row("OpenAL Soft, no HRTF", n),
                let sh = row("Soundstage, HRTF" + suffix, n),
                let se = row("Soundstage, equalPowerPanning" + suffix, n)
            else { continue }
            let d = Double(n)
            print(
                "| \(n)\(suffix) | \(format(oh.cpu / d)) | \(format(op.cpu / d)) "
                    + "| \(format(sh.render / d)) / \(format(sh.update / d)) "
                    + "| \(format(sh.render / oh.cpu, 2)) / \(format(sh.cpu / oh.cpu, 2)) "
                    + "| \(format(se.render / d)) / \(format(se.update / d)) "
                    + "| \(format(se.render / op.cpu, 2)) / \(format(se.cpu / op.cpu, 2)) "
                    + "| \(format(sh.cpu / 10, 1)) % (OpenAL \(format(oh.cpu / 10, 1)) %) |")
        }
    }
}
