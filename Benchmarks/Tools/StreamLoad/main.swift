// Disk-streaming load: N distinct long files scheduled on N players that stream from disk, rendered in
// real time (one period per `period / rate` seconds on a render thread of its own, as JACK would call
// it), while the engine's disk thread decodes. Reports underruns (the target is none), the disk
// thread's CPU, the render calls' cost and the memory each stream holds.
//
//   swift run --package-path Benchmarks -c release StreamLoad [--streams 64] [--seconds 30]
//       [--file-seconds 60] [--format wav|flac|ogg|opus|mp3|aac|alac] [--period 256]
//       [--dir DIR] [--keep-cache]
import AudioFiles
import AudioGraph
import Foundation
import SoundstageKit
import StreamFixtures
import Synchronization

var streamCount = 64
var seconds = 30.0
var fileSeconds = 60
var formatName = "wav"
var periodFrames = 256
var directory = (ProcessInfo.processInfo.environment["TMPDIR"] ?? "/tmp") + "/soundstage-streamload"
var dropsCache = true
var arguments = CommandLine.arguments.dropFirst().makeIterator()
while let argument = arguments.next() {
    switch argument {
    case "--streams": streamCount = max(1, Int(arguments.next() ?? "") ?? streamCount)
    case "--seconds": seconds = max(1, Double(arguments.next() ?? "") ?? seconds)
    case "--file-seconds": fileSeconds = max(21, Int(arguments.next() ?? "") ?? fileSeconds)
    case "--format": formatName = arguments.next() ?? formatName
    case "--period": periodFrames = max(16, Int(arguments.next() ?? "") ?? periodFrames)
    case "--dir": directory = arguments.next() ?? directory
    case "--keep-cache": dropsCache = false
    default:
        print(
            "usage: StreamLoad [--streams N] [--seconds S] [--file-seconds S] [--format F] [--period FRAMES] "
                + "[--dir DIR] [--keep-cache]")
        exit(2)
    }
}
guard AssetFactory.format(named: formatName) != nil else {
    print("unknown format '\(formatName)'; one of \(AssetFactory.formats.map(\.name).joined(separator: ", "))")
    exit(2)
}
let rate = AssetFactory.sampleRate
let periodMilliseconds = 1_000 * Double(periodFrames) / rate

// Fixtures: N distinct files, made once and kept in `directory`.
print(
    "StreamLoad: \(streamCount) streams of \(fileSeconds) s stereo \(Int(rate)) Hz \(formatName), \(periodFrames)-frame "
        + "periods (\(ProcessStats.fixed(periodMilliseconds, 3)) ms), \(Int(seconds)) s in real time")
var paths: [String] = []
var bytesOnDisk = 0
let making = ProcessStats.now()
var made = 0
for seed in 0..<streamCount {
    let asset = try AssetFactory.asset(
        in: directory, prefix: "stream", seed: seed, seconds: fileSeconds, format: formatName)
    if asset.isNew { made += 1 }
    paths.append(asset.path)
    bytesOnDisk += AssetFactory.size(of: asset.path)
}
if made > 0 { print("made \(made) files in \(ProcessStats.fixed(ProcessStats.now() - making, 1)) s") }
print(
    "files: \(directory), \(ProcessStats.fixed(Double(bytesOnDisk) / 1_048_576, 1)) MiB in all "
        + "(\(ProcessStats.fixed(Double(bytesOnDisk) * 8 / Double(streamCount) / Double(fileSeconds) / 1000, 0)) kbit/s per file)"
)
if dropsCache {
    for path in paths { AssetFactory.dropFromPageCache(path) }
    print("page cache: dropped for these files (POSIX_FADV_DONTNEED), so the disk thread reads the disk")
}

// The engine: N players → mixer → main, every file streamed (threshold 20 s).
let engine = Engine(
    configuration: EngineConfiguration(sampleRate: rate, blockFrames: 64, outputChannelCount: 2, inputChannelCount: 0),
    fileLoader: nil, streamOpener: PatchLoader.streamOpener(relativeTo: nil), streamingThresholdSeconds: 20)
let underrunEvents = Atomic<Int>(0)
let underrunFrames = Atomic<Int>(0)
let failures = Mutex<[String]>([])
engine.setEventHandler { event in
    switch event {
    case .streamUnderrun(_, let frames):
        underrunEvents.add(1, ordering: .relaxed)
        underrunFrames.add(frames, ordering: .relaxed)
    case .streamFailed(let path, let message): failures.withLock { $0.append("\(path): \(message)") }
    default: break
    }
}
try engine.attach(.mixer, name: "mix")
try engine.connect("mix", to: "main")
for index in 0..<streamCount {
    try engine.attach(.player, name: "p\(index)", parameters: ["volume": .float(1 / Double(streamCount))])
    try engine.connect("p\(index)", to: "mix")
}
engine.poll()
let residentBefore = ProcessStats.residentBytes()
let heapBefore = ProcessStats.heapInUseBytes()
let scheduling = ProcessStats.now()
for (index, path) in paths.enumerated() { try engine.scheduleFile("p\(index)", path: path) }
let schedulingSeconds = ProcessStats.now() - scheduling
let residentAfter = ProcessStats.residentBytes()
let heapAfter = ProcessStats.heapInUseBytes()
let status = engine.streamStatus
guard status.count == streamCount else {
    print("only \(status.count) of \(streamCount) files stream (the rest were preloaded)")
    exit(1)
}
for index in 0..<streamCount { try engine.play("p\(index)") }
print(
    "scheduled (opened, primed \(status[0].capacityFrames)-frame rings): \(ProcessStats.fixed(schedulingSeconds, 2)) s")

// Run: the render thread paces itself; this thread polls like the CLI's main loop and watches the
// rings' fill level.
let diskCPUBefore = ProcessStats.cpuSeconds(ofThreadsNamed: "soundstage-disk")
var usageBefore = rusage()
getrusage(Int32(RUSAGE_SELF.rawValue), &usageBefore)
let renderer = PacedRenderer(
    renderEngine: engine.renderEngine, periodFrames: periodFrames, sampleRate: rate, seconds: seconds)
let started = ProcessStats.now()
renderer.start()
var lowestBuffered = Int.max
var lastSample = 0.0
while ProcessStats.now() - started < seconds - 0.05 {
    usleep(10_000)
    engine.poll()
    if ProcessStats.now() - lastSample >= 0.1 {
        lastSample = ProcessStats.now()
        lowestBuffered = min(lowestBuffered, engine.streamStatus.map(\.bufferedFrames).min() ?? 0)
    }
}
renderer.wait()
let wall = ProcessStats.now() - started
engine.poll()
let diskCPU = ProcessStats.cpuSeconds(ofThreadsNamed: "soundstage-disk") - diskCPUBefore
var usageAfter = rusage()
getrusage(Int32(RUSAGE_SELF.rawValue), &usageAfter)
func seconds(_ t: timeval) -> Double { Double(t.tv_sec) + Double(t.tv_usec) / 1e6 }
let processCPU =
    seconds(usageAfter.ru_utime) + seconds(usageAfter.ru_stime)
    - seconds(usageBefore.ru_utime) - seconds(usageBefore.ru_stime)
let final = engine.streamStatus
let ringUnderruns = final.reduce(0) { $0 + $1.underrunFrames }

// Report.
let calls = renderer.callSeconds.map { $0 * 1e6 }
let lateness = renderer.wakeLateness.map { $0 * 1e6 }
let audioSeconds = Double(renderer.cycles * periodFrames) / rate
let engineBytes = final.reduce(0) { $0 + $1.memoryBytes }
print("")
print(
    "render thread: SCHED_FIFO \(renderer.isRealtime ? "yes (priority 70)" : "refused; normal priority"), "
        + "\(renderer.cycles) periods in \(ProcessStats.fixed(wall, 2)) s, output peak \(ProcessStats.fixed(Double(renderer.peak), 3))"
)
print(
    "underruns: \(underrunEvents.load(ordering: .relaxed)) events, \(underrunFrames.load(ordering: .relaxed)) frames "
        + "(rings' own count: \(ringUnderruns) frames); decode failures: \(failures.withLock { $0.count })")
print("missed deadlines (render call ended after the next period began): \(renderer.missedDeadlines)")
print(
    "lowest ring fill seen (any stream, sampled every 0.1 s): \(lowestBuffered) frames "
        + "(\(ProcessStats.fixed(Double(lowestBuffered) / rate * 1000, 0)) ms)")
print(
    "render call: mean \(ProcessStats.fixed(calls.reduce(0, +) / Double(calls.count), 1)) µs, "
        + "p99 \(ProcessStats.fixed(ProcessStats.quantile(calls, 0.99), 1)) µs, max \(ProcessStats.fixed(calls.max() ?? 0, 1)) µs "
        + "(period \(ProcessStats.fixed(periodMilliseconds * 1000, 0)) µs); mean = "
        + "\(ProcessStats.fixed(100 * calls.reduce(0, +) / Double(calls.count) / (periodMilliseconds * 1000), 2)) % of the period"
)
print(
    "render thread CPU: \(ProcessStats.fixed(renderer.threadCPUSeconds / audioSeconds * 1000, 2)) ms per s of audio "
        + "(\(ProcessStats.fixed(renderer.threadCPUSeconds / audioSeconds * 1000 / Double(streamCount), 3)) ms/s per stream)"
)
print(
    "wake-up lateness: median \(ProcessStats.fixed(ProcessStats.median(lateness), 0)) µs, "
        + "p99 \(ProcessStats.fixed(ProcessStats.quantile(lateness, 0.99), 0)) µs, max \(ProcessStats.fixed(lateness.max() ?? 0, 0)) µs"
)
print(
    "disk thread CPU: \(ProcessStats.fixed(diskCPU, 2)) s over \(ProcessStats.fixed(wall, 1)) s = "
        + "\(ProcessStats.fixed(100 * diskCPU / wall, 1)) % of one core "
        + "(\(ProcessStats.fixed(diskCPU / wall / Double(streamCount) * 1000, 2)) ms/s per stream)")
print("process CPU: \(ProcessStats.fixed(100 * processCPU / wall, 1)) % of one core")
let streams = Double(streamCount)
let kibibytesPerStream = { (bytes: Int) -> String in ProcessStats.fixed(Double(bytes) / streams / 1024, 1) }
print(
    "memory per stream: \(kibibytesPerStream(engineBytes)) KiB counted by the engine (ring "
        + "\(ProcessStats.fixed(Double(final[0].capacityFrames * 2 * 4) / 1024, 0)) KiB, disk-thread scratch and decoder "
        + "buffers); scheduling grew the heap in use by \(kibibytesPerStream(heapAfter - heapBefore)) KiB and RSS by "
        + "\(kibibytesPerStream(residentAfter - residentBefore)) KiB per stream (the difference to the engine's count is the "
        + "decoders' own state: demuxer, codec context, index)")
let isClean = underrunEvents.load(ordering: .relaxed) == 0 && ringUnderruns == 0 && failures.withLock { $0.isEmpty }
print(isClean ? "result: no underrun" : "result: UNDERRUNS or failures")
for failure in failures.withLock({ $0 }) { print("  failed: \(failure)") }
exit(isClean ? 0 : 1)
