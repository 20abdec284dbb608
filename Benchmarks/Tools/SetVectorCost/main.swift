// The control-side cost of moving 3D sources, in µs per moved source: `Engine.setVector` (one call per
// source, by name) and `Engine.moveSources` (one call for all of them, by node number), for N sources
// in one environment rendered with equal-power panning, HRTF and HRTF HQ. No render thread: the command
// queue is drained between rounds by an offline render of one block.
//
//   swift run --package-path Benchmarks -c release SetVectorCost [N] [rounds]
//   ONLY=HRTF (or equalPowerPanning, HRTFHQ): that algorithm alone, moveSources only
import AudioGraph
import Foundation
import SoundstageKit

let count = CommandLine.arguments.count > 1 ? Int(CommandLine.arguments[1]) ?? 64 : 64
let rounds = CommandLine.arguments.count > 2 ? Int(CommandLine.arguments[2]) ?? 40 : 40

/// An engine with `count` looping players in one environment, rendered with `algorithm`.
func makeEngine(algorithm: String) throws -> (Engine, [String]) {
    let engine = Engine(configuration: EngineConfiguration(sampleRate: 48_000, blockFrames: 64), hrtfSets: .sofaFiles)
    try engine.addBuffer(SampleBuffer(name: "dc", channels: [Array(repeating: 0.1, count: 4_800)], sampleRate: 48_000))
    try engine.attach(.environment, name: "env")
    try engine.connect("env", to: "main")
    for i in 0..<count {
        try engine.attach(
            .player, name: "s\(i)",
            parameters: [
                "buffer": .string("dc"), "loop": .bool(true), "playing": .bool(true),
                "renderingAlgorithm": .string(algorithm)
            ])
        try engine.connect("s\(i)", to: "env")
    }
    return (engine, (0..<count).map { "s\($0)" })
}

/// Sources evenly spaced on a circle, turning at 0.5 revolutions per second with a move every 128
/// frames at 48 kHz (as in OpenALCompare).
func angleOf(source i: Int, round: Int) -> Double {
    2 * Double.pi * (Double(i) / Double(count) + 0.5 * Double(round) * 128 / 48_000)
}

/// Median, min and max µs per moved source over `rounds` rounds (the first five not counted).
func measure(algorithm: String, batched: Bool) throws -> (Double, Double, Double) {
    let (engine, names) = try makeEngine(algorithm: algorithm)
    let ids = try names.map { try engine.nodeID($0) }
    var moves = [SourceMove](repeating: SourceMove(node: 0, .position, 0, 0, 0), count: count)
    let renderer = OfflineRenderer(engine: engine)
    var results: [Double] = []
    for round in 0..<rounds {
        let start = DispatchTime.now().uptimeNanoseconds
        if batched {
            for i in 0..<count {
                let angle = angleOf(source: i, round: round)
                moves[i] = SourceMove(node: ids[i], .position, 2 * sin(angle), 0, -2 * cos(angle))
            }
            try engine.moveSources(moves)
        } else {
            for (i, name) in names.enumerated() {
                let angle = angleOf(source: i, round: round)
                try engine.setVector(name, "position", 2 * sin(angle), 0, -2 * cos(angle))
            }
        }
        let elapsed = Double(DispatchTime.now().uptimeNanoseconds - start) / 1_000 / Double(count)
        if round >= 5 { results.append(elapsed) }
        _ = renderer.render(frameCount: 64, hostBlockFrames: 64)
    }
    results.sort()
    return (results[results.count / 2], results[0], results[results.count - 1])
}

let only = ProcessInfo.processInfo.environment["ONLY"]
for algorithm in ["equalPowerPanning", "HRTF", "HRTFHQ"] where only == nil || only == algorithm {
    for batched in [false, true] where only == nil || batched {
        let (median, low, high) = try measure(algorithm: algorithm, batched: batched)
        print(
            String(
                format: "%@ on %d %@ sources: median %.3f µs per source (min %.3f, max %.3f)",
                batched ? "moveSources" : "setVector  ", count, algorithm, median, low, high))
    }
}
