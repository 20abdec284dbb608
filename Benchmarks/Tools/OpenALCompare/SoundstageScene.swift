// Soundstage side of the comparison: an Engine with one `environment` node and N looping players of a
// mono buffer connected to it, moved before every block and rendered exactly as JACK's process callback
// renders: `RenderEngine.render(frameCount: 128, …)`. Moves: `engine.moveSources` with every source
// (by node number) in one call, the counterpart of OpenAL's deferred updates; or, with `byName`,
// `engine.setVector(name, "position", …)` per source inside one `engine.batch` (what an OSC bundle of
// `/node/<name>/position` messages does).
import AudioGraph
import SoundstageKit

/// An engine with `sourceCount` players → `env` (environment) → main.
final class SoundstageScene: Scene {
    let name: String
    let sourceCount: Int
    let engine: Engine
    private let renderEngine: RenderEngine
    private let names: [String]
    private let ids: [Int32]
    private let byName: Bool
    private let moves: UnsafeMutableBufferPointer<SourceMove>
    private let outputs: UnsafeMutablePointer<UnsafeMutablePointer<Float>?>
    private let storage: UnsafeMutablePointer<Float>
    private let blockFrames: Int

    init(
        algorithm: String, sourceCount: Int, signal: [Float], sampleRate: Int, blockFrames: Int, engineBlockFrames: Int,
        byName: Bool
    ) throws {
        name = "Soundstage, \(algorithm)" + (byName ? " (setVector)" : "")
        self.byName = byName
        self.sourceCount = sourceCount
        self.blockFrames = blockFrames
        engine = Engine(
            configuration: EngineConfiguration(
                sampleRate: Double(sampleRate), blockFrames: engineBlockFrames, outputChannelCount: 2,
                inputChannelCount: 0),
            hrtfSets: .sofaFiles)
        renderEngine = engine.renderEngine
        try engine.addBuffer(SampleBuffer(name: "s", channels: [signal], sampleRate: Double(sampleRate)))
        try engine.attach(.environment, name: "env")
        try engine.connect("env", to: "main")
        var names: [String] = []
        for i in 0..<sourceCount {
            let name = "p\(i)"
            try engine.attach(
                .player, name: name,
                parameters: [
                    "buffer": .string("s"), "loop": .bool(true), "playing": .bool(true),
                    "start": .int(Stagger.startFrame(i, frames: signal.count)),
                    "renderingAlgorithm": .string(algorithm), "positionZ": .float(-2)
                ])
            try engine.connect(name, to: "env")
            names.append(name)
        }
        self.names = names
        let engine = self.engine
        ids = try names.map { name throws(EngineError) in try engine.nodeID(name) }
        moves = .allocate(capacity: sourceCount)
        for i in 0..<sourceCount { moves[i] = SourceMove(node: ids[i], .position, 0, 0, -2) }
        storage = .allocate(capacity: 2 * blockFrames)
        storage.initialize(repeating: 0, count: 2 * blockFrames)
        outputs = .allocate(capacity: 2)
        outputs[0] = storage
        outputs[1] = storage + blockFrames
        let collected = ProblemBox()
        engine.setEventHandler { event in
            if case .environmentProblem(_, let message) = event { collected.append(message) }
        }
        render()
        engine.poll()
        if let problem = collected.first { throw BenchError("Soundstage: \(problem)") }
    }

    deinit {
        outputs.deallocate()
        storage.deallocate()
        moves.deallocate()
    }

    /// Every source's position, as one batch (one push of N commands).
    func update(positions: UnsafePointer<Float>) {
        if !byName {
            for i in 0..<sourceCount {
                moves[i].x = Double(positions[3 * i])
                moves[i].y = Double(positions[3 * i + 1])
                moves[i].z = Double(positions[3 * i + 2])
            }
            do {
                try engine.moveSources(UnsafeBufferPointer(moves))
            } catch {
                fatalError("moveSources: \(error)")
            }
            return
        }
        do {
            try engine.batch { () throws(EngineError) in
                for i in 0..<sourceCount {
                    try engine.setVector(
                        names[i], "position", Double(positions[3 * i]), Double(positions[3 * i + 1]),
                        Double(positions[3 * i + 2]))
                }
            }
        } catch {
            fatalError("setVector: \(error)")
        }
    }

    func render() {
        renderEngine.render(
            frameCount: blockFrames, inputs: nil, inputCount: 0, outputs: UnsafePointer(outputs),
            outputCount: 2)
    }

    func lastBlockPower() -> Double {
        var sum = 0.0
        for i in 0..<(2 * blockFrames) { sum += Double(storage[i]) * Double(storage[i]) }
        return sum / Double(2 * blockFrames)
    }

    func poll() { engine.poll() }
}

/// Collects event messages from the engine's handler (called on the polling thread).
final class ProblemBox: @unchecked Sendable {
    private(set) var messages: [String] = []
    func append(_ message: String) { messages.append(message) }
    var first: String? { messages.first }
}
