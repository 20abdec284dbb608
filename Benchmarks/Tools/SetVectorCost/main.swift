// The control-side cost of moving a 3D source: Engine.setVector on N sources in one environment, in
// µs per call (no render thread: the command queue is drained between rounds).
//
//   swift run --package-path Benchmarks -c release SetVectorCost [N]
import AudioGraph
import Foundation

let count = CommandLine.arguments.count > 1 ? Int(CommandLine.arguments[1]) ?? 64 : 64
let engine = Engine(configuration: EngineConfiguration(sampleRate: 48_000, blockFrames: 64))
try engine.addBuffer(SampleBuffer(name: "dc", channels: [Array(repeating: 0.1, count: 4_800)], sampleRate: 48_000))
try engine.attach(.environment, name: "env")
try engine.connect("env", to: "main")
for i in 0..<count {
    try engine.attach(.player, name: "s\(i)", parameters: ["buffer": .string("dc"), "loop": .bool(true), "playing": .bool(true)])
    try engine.connect("s\(i)", to: "env")
}
let names = (0..<count).map { "s\($0)" }
let renderer = OfflineRenderer(engine: engine)
var results: [Double] = []
for round in 0..<40 {
    let start = DispatchTime.now().uptimeNanoseconds
    for (i, name) in names.enumerated() {
        let angle = Double(round * count + i) * 0.01
        try engine.setVector(name, "position", 2 * sin(angle), 0, -2 * cos(angle))
    }
    let elapsed = Double(DispatchTime.now().uptimeNanoseconds - start) / 1_000 / Double(count)
    if round >= 5 { results.append(elapsed) }
    _ = renderer.render(frameCount: 64, hostBlockFrames: 64)
}
results.sort()
print(String(format: "setVector on %d sources: median %.3f µs per call (min %.3f, max %.3f)", count,
             results[results.count / 2], results[0], results[results.count - 1]))
