// Moving 3D sources by node number (`Engine.moveSources`): the same sound as `setVector`, all or
// nothing on bad input, and the moved values readable afterwards.
import AudioDSP
@testable import AudioGraph
import DSPTestSupport
import Foundation
import Testing

@Suite struct MoveSourcesTests {
    static let rate = TestEngine.rate

    /// An environment → main with `count` looping mono sines (`s0`, `s1`, …) straight ahead at 2 m.
    private func scene(count: Int, algorithm: String = "equalPowerPanning") throws -> Engine {
        let engine = TestEngine.make(outputs: 2)
        let tone = TestSignal.sine(frequency: 440, sampleRate: Self.rate, frames: 48_000, amplitude: 0.5)
        try engine.addBuffer(SampleBuffer(name: "tone", channels: [tone], sampleRate: Self.rate))
        try engine.attach(.environment, name: "env")
        try engine.connect("env", to: "main")
        for i in 0..<count {
            try engine.attach(
                .player, name: "s\(i)",
                parameters: [
                    "buffer": .string("tone"), "loop": .bool(true), "playing": .bool(true), "positionZ": .float(-2),
                    "renderingAlgorithm": .string(algorithm), "start": .int(i * 1_000)
                ])
            try engine.connect("s\(i)", to: "env")
        }
        return engine
    }

    /// Where source i is at step `step` of an orbit (one revolution per 60 steps).
    private static func position(_ i: Int, step: Int) -> (Double, Double, Double) {
        let angle = 2 * Double.pi * (Double(i) / 4 + Double(step) / 60)
        return (2 * sin(angle), 0.3 * Double(i), -2 * cos(angle))
    }

    /// Four orbiting sources moved by `moveSources` sound exactly as when each is moved by `setVector`
    /// (a null test over 1 s, blocks of 256 with a move before each), for every kind of kernel.
    @Test(arguments: ["equalPowerPanning", "HRTF", "sphericalHead"])
    func movesSoundExactlyAsSetVectorDoes(algorithm: String) throws {
        var outputs: [[[Float]]] = []
        for batched in [false, true] {
            let engine = try scene(count: 4, algorithm: algorithm)
            let ids = try (0..<4).map { try engine.nodeID("s\($0)") }
            let renderer = OfflineRenderer(engine: engine)
            var out: [[Float]] = [[], []]
            for step in 0..<188 {
                if batched {
                    try engine.moveSources(
                        (0..<4).map { i in
                            let p = Self.position(i, step: step)
                            return SourceMove(node: ids[i], .position, p.0, p.1, p.2)
                        })
                } else {
                    for i in 0..<4 {
                        let p = Self.position(i, step: step)
                        try engine.setVector("s\(i)", "position", p.0, p.1, p.2)
                    }
                }
                let block = renderer.render(frameCount: 256, hostBlockFrames: 256)
                out[0] += block[0]
                out[1] += block[1]
            }
            outputs.append(out)
        }
        #expect(SignalStats.rms(outputs[1][0][4_800...]) > 0.05, "\(algorithm): silent")
        #expect(outputs[0] == outputs[1], "\(algorithm): moveSources and setVector sound different")
    }

    /// A source moved hard right with `moveSources` is heard on the right only (equal power), and a
    /// velocity and a facing direction move too.
    @Test func aMovedSourceIsHeardWhereItWasMoved() throws {
        let engine = try scene(count: 1)
        let id = try engine.nodeID("s0")
        try engine.moveSources([
            SourceMove(node: id, .position, 3, 0, 0), SourceMove(node: id, .velocity, 0, 0, 0),
            SourceMove(node: id, .direction, -1, 0, 0)
        ])
        let out = TestEngine.render(engine, frames: 9_600)
        #expect(SignalStats.rms(out[0][4_800...]) < 1e-6, "left should be silent")
        #expect(SignalStats.rms(out[1][4_800...]) > 0.05)
        #expect(try engine.get("s0", "positionX") == .float(3))
        #expect(try engine.get("s0", "directionX") == .float(-1))
    }

    /// One bad move (unknown node, a node that is not a 3D source, a coordinate that is not finite or out
    /// of range) refuses the whole call with an error naming it; nothing moves, nothing changes in the
    /// sound.
    @Test func aBadMoveRefusesTheWholeCall() throws {
        let engine = try scene(count: 2)
        let ids = try (0..<2).map { try engine.nodeID("s\($0)") }
        let environment = try engine.nodeID("env")
        let good = SourceMove(node: ids[0], .position, 2, 0, 0)
        let bad: [(SourceMove, EngineError.Code, String)] = [
            (SourceMove(node: 9_999, .position, 0, 0, -1), .unknownNode, "9999"),
            (SourceMove(node: environment, .position, 0, 0, -1), .notAllowed, "env"),
            (SourceMove(node: ids[1], .position, .nan, 0, -1), .outOfRange, "positionX"),
            (SourceMove(node: ids[1], .velocity, 0, 2e4, 0), .outOfRange, "velocityY"),
            (SourceMove(node: ids[1], .direction, 0, 0, -.infinity), .outOfRange, "directionZ")
        ]
        let before = TestEngine.render(engine, frames: 4_800)
        for (move, code, named) in bad {
            do {
                try engine.moveSources([good, move])
                Issue.record("\(move) was accepted")
            } catch {
                #expect(error.code == code, "\(move): \(error)")
                #expect(error.message.contains(named), "\(move): \(error.message)")
            }
        }
        #expect(try engine.get("s0", "positionX") == .float(0), "the good move of a refused call was applied")
        let after = TestEngine.render(engine, frames: 4_800)
        // Both sources still straight ahead: equal on both sides, as before.
        #expect(zip(after[0], after[1]).allSatisfy { $0 == $1 })
        #expect(abs(SignalStats.rms(after[0][2_400...]) - SignalStats.rms(before[0][2_400...])) < 0.02)
    }

    /// Moves land in the node's values lazily; whatever reads or edits them next sees the moved vector:
    /// a get, a generic set of one coordinate, and the node list (what patches save).
    @Test func movedValuesAreWhatTheNodeReports() throws {
        let engine = try scene(count: 1)
        let id = try engine.nodeID("s0")
        try engine.moveSources([SourceMove(node: id, .position, 1, 2, 3)])
        try engine.setVector("s0", "velocity", 4, 5, 6)
        try engine.set("s0", "positionY", to: .float(-2))
        #expect(try engine.get("s0", "positionX") == .float(1))
        #expect(try engine.get("s0", "positionY") == .float(-2))
        #expect(try engine.get("s0", "positionZ") == .float(3))
        let listed = try #require(engine.nodes().first { $0.name == "s0" })
        #expect(listed.parameters["velocityZ"] == .float(6))
        #expect(listed.parameters["positionX"] == .float(1))
        // The next move after a generic set starts from the values the set left.
        try engine.moveSources([SourceMove(node: id, .direction, 0, 0, 1)])
        #expect(try engine.get("s0", "positionY") == .float(-2))
        #expect(try engine.get("s0", "directionZ") == .float(1))
    }

    @Test func nodeIDsNameTheirNodeUntilItIsDetached() throws {
        let engine = try scene(count: 1)
        #expect(throws: EngineError.self) { try engine.nodeID("nobody") }
        let id = try engine.nodeID("s0")
        try engine.detach("s0")
        #expect(throws: EngineError.self) { try engine.moveSources([SourceMove(node: id, .position, 1, 0, 0)]) }
        try engine.attach(.player, name: "s0")
        #expect(try engine.nodeID("s0") != id)
    }
}
