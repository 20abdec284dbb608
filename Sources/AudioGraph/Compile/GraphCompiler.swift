// Control side. Turns the node/connection model into a flat RenderProgram: active chains only,
// in dependency order, with every bus preallocated. The compile runs in named phases, each its own
// file: which nodes run (GraphCompiler+Plan), where their buses live (GraphCompiler+Buses), and the
// steps that read and write them (GraphCompiler+Steps).
import AudioDSP

/// Compiles a graph snapshot into a `RenderProgram`.
///
/// Active chains follow AVAudioEngine: a node renders only if a path leads from it to the output node,
/// to a tapped node or to an effect exposed as host ports (an insert: the host listens to it). The
/// order is a depth-first post-order from those sinks over input edges, so
/// every node runs after all of its sources; fan-out sources run once and are read by each consumer.
enum GraphCompiler {
    struct Input {
        /// Every node to consider, keyed by the name connections use (retiring nodes under private keys).
        var nodes: [String: NodeRecord]
        /// Live connections plus those still fading out.
        var connections: [Connection]
        /// The fade of every connection into a mixer or the output.
        var fades: [Connection: EdgeFade]
        var taps: [TapRecord]
        var meters: [MeterRecord]
        /// Effects exposed as host ports, by node name: they render even when nothing in the graph
        /// listens (the host does).
        var inserts: [String: HostInsert] = [:]
        /// The voice of every connection into an environment.
        var voices: [VoiceKey: UnsafeMutablePointer<SpatialVoice>] = [:]
        var maxBlockFrames: Int
        var generation: Int
    }

    /// The phases in order: sinks → active nodes → plan → bus layout → input tables → steps.
    static func compile(_ input: Input) -> RenderProgram {
        let sinks = Set(input.taps.map(\.node)).union(input.inserts.keys)
        let active = activeNodes(nodes: input.nodes, connections: input.connections, tappedNodes: sinks)
        let plan = plan(
            nodes: input.nodes, connections: input.connections, active: active,
            inserts: Set(input.inserts.keys))
        let order = plan.flatMap(\.names)
        let buses = BusLayout(order: order, nodes: input.nodes, stride: input.maxBlockFrames)
        var emitter = StepEmitter(
            input: input, active: active, buses: buses,
            capacity: InputTableCapacity(order: order, input: input, active: active))
        let steps = emitter.steps(for: plan, inChain: false)
        return RenderProgram(
            generation: input.generation, steps: steps, busSlab: buses.slab, mixerInputs: emitter.mixerInputs,
            environmentInputs: emitter.environmentInputs, voiceSteps: emitter.voiceSteps, activeNodeNames: order)
    }
}
