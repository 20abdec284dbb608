// The compile's phases one at a time: the plan's order, the bus layout and the input-table sizes.
@testable import AudioGraph
import Testing

@Suite struct GraphCompilerPhaseTests {
    /// p (stereo player) → verb (stereo effect) → main (mono mixer) → output (stereo); x is connected
    /// to main but not active.
    static func graph() -> (nodes: [String: NodeRecord], connections: [Connection]) {
        let nodes = [
            NodeRecord(name: "p", kind: .player, id: 1, outputChannelCount: 2),
            NodeRecord(name: "verb", kind: .reverb, id: 2, outputChannelCount: 2),
            NodeRecord(name: "main", kind: .mixer, id: 3, outputChannelCount: 1),
            NodeRecord(name: "output", kind: .output, id: 4, outputChannelCount: 2),
            NodeRecord(name: "x", kind: .player, id: 5, outputChannelCount: 2)
        ]
        let connections = [
            Connection(source: "p", destination: "verb", destinationBus: 0),
            Connection(source: "verb", destination: "main", destinationBus: 0),
            Connection(source: "main", destination: "output", destinationBus: 0),
            Connection(source: "x", destination: "main", destinationBus: 1)
        ]
        return (Dictionary(uniqueKeysWithValues: nodes.map { ($0.name, $0) }), connections)
    }

    @Test func planRunsSourcesFirstAndOnlyWhatReachesASink() {
        let (nodes, all) = Self.graph()
        let connections = all.filter { $0.source != "x" }
        let active = GraphCompiler.activeNodes(nodes: nodes, connections: connections, tappedNodes: [])
        #expect(active == ["p", "verb", "main", "output"])
        #expect(
            GraphCompiler.executionOrder(nodes: nodes, connections: connections, active: active)
                == ["p", "verb", "main", "output"])
        // A tap makes x a sink of its own.
        let tapped = GraphCompiler.activeNodes(nodes: nodes, connections: connections, tappedNodes: ["x"])
        #expect(tapped.contains("x"))
    }

    @Test func busLayoutGivesEachBusItsOwnZeroedSpan() {
        let (nodes, _) = Self.graph()
        let stride = 64
        let layout = GraphCompiler.BusLayout(order: ["p", "verb", "main", "output"], nodes: nodes, stride: stride)
        defer { layout.slab.deallocate() }
        // p: 2 channels; verb: 2 out + 2 in; main: 1; output: 2.
        #expect(layout.slab.count == (2 + 2 + 2 + 1 + 2) * stride)
        #expect(layout.slab.allSatisfy { $0 == 0 })
        let spans = [
            layout.bus("p"), layout.bus("verb"), layout.inputBus("verb"), layout.bus("main"), layout.bus("output")
        ]
        .map { bus in
            let start = bus!.data - layout.slab.baseAddress!
            return start..<(start + bus!.channelCount * stride)
        }
        for (i, a) in spans.enumerated() {
            #expect(a.upperBound <= layout.slab.count)
            for b in spans[(i + 1)...] { #expect(!a.overlaps(b)) }
        }
        #expect(layout.inputBus("p") == nil, "a player has no input bus")
        #expect(layout.stageBus("p") == nil, "only a rate-staged audioplayer has a stage bus")
        #expect(layout.bus("x") == nil, "inactive nodes get no bus")
        #expect(layout.bus("main")?.channelCount == 1)
    }

    @Test func inputTablesHoldOneEntryPerActiveConnection() {
        let (nodes, connections) = Self.graph()
        let input = GraphCompiler.Input(
            nodes: nodes, connections: connections, fades: [:], taps: [], meters: [],
            maxBlockFrames: 64, generation: 1)
        let active: Set<String> = ["p", "verb", "main", "output"]
        let capacity = GraphCompiler.InputTableCapacity(
            order: ["p", "verb", "main", "output"], input: input,
            active: active)
        // verb ← p, main ← verb (x is inactive), output ← main.
        #expect(capacity.mixerInputs == 3)
        #expect(capacity.environmentInputs == 0)
    }
}
