// Control side. The compile's last phase: the render steps of the plan, each node's inputs gathered
// into the program's mixer and environment tables.
import AudioDSP

extension GraphCompiler {
    /// Emits steps and fills the input tables it allocated (owned by the program once compiled).
    struct StepEmitter {
        let input: Input
        let active: Set<String>
        let buses: BusLayout
        let mixerInputs: UnsafeMutableBufferPointer<MixerInput>
        let environmentInputs: UnsafeMutableBufferPointer<EnvironmentInput>
        /// The voice-processor steps' payloads (a step holds a pointer here, so `RenderStep` stays small).
        let voiceSteps: UnsafeMutableBufferPointer<VoiceProcessorStep>
        private var voiceUsed = 0
        private var mixerUsed = 0
        private var environmentUsed = 0

        init(input: Input, active: Set<String>, buses: BusLayout, capacity: InputTableCapacity) {
            self.input = input
            self.active = active
            self.buses = buses
            environmentInputs = .allocate(capacity: max(1, capacity.environmentInputs))
            mixerInputs = .allocate(capacity: max(1, capacity.mixerInputs))
            voiceSteps = .allocate(capacity: max(1, capacity.voiceSteps))
        }

        /// The steps of `entries`; `inChain`: they run on a time effect's clock.
        mutating func steps(for entries: [Entry], inChain: Bool) -> [RenderStep] {
            var steps: [RenderStep] = []
            for entry in entries {
                switch entry {
                case .node(let name):
                    steps += nodeSteps(name, inChain: inChain) + observerSteps(name)
                case .timeEffect(let name, let chainEntries):
                    let chain = self.steps(for: chainEntries, inChain: true)
                    guard let node = input.nodes[name], let b = buses.bus(name), let unity = node.mixer,
                        let effect = node.effect, let fifo = node.timeFIFO, let inputBus = buses.inputBus(name)
                    else {
                        steps += chain
                        continue
                    }
                    steps.append(
                        .timeEffect(
                            effect, unity, inputTable(for: name, unityMixing: node.mixing), inputBus, b,
                            fifo, chain.count))
                    steps += chain + observerSteps(name)
                }
            }
            return steps
        }

        /// The live and fading connections into `name`, in bus then source order.
        private func edges(into name: String) -> [Connection] {
            input.connections.filter { $0.destination == name && active.contains($0.source) }
                .sorted { ($0.destinationBus, $0.source) < ($1.destinationBus, $1.source) }
        }

        /// The voices feeding environment `name`.
        private mutating func environmentTable(for name: String, id: Int32) -> UnsafeBufferPointer<EnvironmentInput> {
            let start = environmentUsed
            for edge in edges(into: name) {
                guard let source = buses.bus(edge.source), let sourceNode = input.nodes[edge.source],
                    let fade = input.fades[edge],
                    let voice = input.voices[
                        VoiceKey(
                            source: sourceNode.id, sourceBus: edge.sourceBus, environment: id,
                            bus: edge.destinationBus)]
                else { continue }
                (environmentInputs.baseAddress! + environmentUsed).initialize(
                    to: EnvironmentInput(source: source, mixing: sourceNode.mixing, fade: fade.ramp, voice: voice))
                environmentUsed += 1
            }
            return UnsafeBufferPointer(start: environmentInputs.baseAddress! + start, count: environmentUsed - start)
        }

        /// The inputs of mixer, output or effect `name`. `unityMixing`: the output node and effects ignore
        /// their sources' volume/pan (they apply on mixer inputs only) and pass them through with their
        /// own, always-unity, mixing state.
        private mutating func inputTable(
            for name: String, bus: Int? = nil, unityMixing: UnsafeMutablePointer<MixingState>? = nil
        ) -> UnsafeBufferPointer<MixerInput> {
            let start = mixerUsed
            for edge in edges(into: name) where bus == nil || edge.destinationBus == bus {
                guard let source = buses.bus(edge.source), let sourceNode = input.nodes[edge.source],
                    let fade = input.fades[edge]
                else { continue }
                append(MixerInput(source: source, mixing: unityMixing ?? sourceNode.mixing, fade: fade.ramp))
            }
            return UnsafeBufferPointer(start: mixerInputs.baseAddress! + start, count: mixerUsed - start)
        }

        /// A voice-processor step whose payload lives in the program's `voiceSteps`.
        private mutating func voiceStep(_ payload: VoiceProcessorStep) -> RenderStep {
            let slot = voiceSteps.baseAddress! + voiceUsed
            slot.initialize(to: payload)
            voiceUsed += 1
            return .voiceProcessor(slot)
        }

        private mutating func append(_ entry: MixerInput) {
            (mixerInputs.baseAddress! + mixerUsed).initialize(to: entry)
            mixerUsed += 1
        }

        /// The steps of one node (without taps and meters). `inChain`: the node runs on a time effect's
        /// clock, where host insert buffers cannot be used (their frames belong to the host's period).
        private mutating func nodeSteps(_ name: String, inChain: Bool) -> [RenderStep] {
            guard let node = input.nodes[name], let b = buses.bus(name) else { return [] }
            switch node.kind {
            case .player, .audioplayer:
                guard let player = node.player else { return [] }
                if let stage = node.rateStage, let effect = node.effect, let inputBus = buses.inputBus(name),
                    let playerBus = buses.stageBus(name)
                {
                    let start = mixerUsed
                    append(MixerInput(source: playerBus, mixing: stage.unityMixing, fade: stage.unityFade))
                    let table = UnsafeBufferPointer(start: mixerInputs.baseAddress! + start, count: 1)
                    // The player's volume and pan apply downstream, on the node's bus; its own steps run
                    // at unity on the stage's clock.
                    return [
                        .timeEffect(effect, stage.unityMixer, table, inputBus, b, stage.fifo, 1),
                        .player(player, stage.unityMixing, playerBus)
                    ]
                }
                return [.player(player, node.mixing, b)]
            case .input:
                // With voice processing, the capture channels go to the processor, whose output is the
                // node's bus.
                guard let voice = node.voice, let unity = node.mixer, let mic = buses.inputBus(name),
                    let reference = buses.referenceBus(name)
                else { return [.input(node.mixing, b)] }
                let none = UnsafeBufferPointer<MixerInput>(start: nil, count: 0)
                return [
                    .input(node.mixing, mic),
                    voiceStep(
                        VoiceProcessorStep(
                            stage: voice, unity: unity, micInputs: none, referenceInputs: none, mic: mic,
                            reference: reference, output: b, slot: .none, micIsFilled: true))
                ]
            case .environment:
                guard let environment = node.environment else { return [] }
                return [.environment(environment.state, environmentTable(for: name, id: node.id), b)]
            case .mixer:
                guard let mixer = node.mixer else { return [] }
                return [.mixer(mixer, node.mixing, inputTable(for: name), b)]
            case .output:
                guard let mixer = node.mixer else { return [] }
                // Voice processors that use the engine's output as reference keep it from here.
                let references: [RenderStep] = input.nodes.values.filter { active.contains($0.name) }
                    .sorted { $0.id < $1.id }.compactMap { $0.voice.map { .voiceReference($0, b) } }
                return [.output(mixer, inputTable(for: name, unityMixing: node.mixing), b)] + references
            case .reverb, .delay, .distortion, .eq, .timepitch, .varispeed:
                guard let unity = node.mixer, let effect = node.effect, let inputBus = buses.inputBus(name) else {
                    return []
                }
                let slot =
                    inChain
                    ? InsertSlot.none
                    : input.inserts[name].map { InsertSlot(base: $0.base, channelCount: $0.channelCount) } ?? .none
                return [.effect(effect, unity, inputTable(for: name, unityMixing: node.mixing), inputBus, b, slot)]
            case .voiceprocessor:
                guard let unity = node.mixer, let voice = node.voice, let mic = buses.inputBus(name),
                    let reference = buses.referenceBus(name)
                else { return [] }
                let slot =
                    inChain
                    ? InsertSlot.none
                    : input.inserts[name].map { InsertSlot(base: $0.base, channelCount: $0.channelCount) } ?? .none
                let micInputs = inputTable(for: name, bus: 0, unityMixing: node.mixing)
                let referenceInputs = inputTable(for: name, bus: 1, unityMixing: node.mixing)
                return [
                    voiceStep(
                        VoiceProcessorStep(
                            stage: voice, unity: unity, micInputs: micInputs, referenceInputs: referenceInputs,
                            mic: mic, reference: reference, output: b, slot: slot, micIsFilled: false))
                ]
            }
        }

        /// Taps and meters on `name`'s bus, after its own steps.
        private func observerSteps(_ name: String) -> [RenderStep] {
            guard let b = buses.bus(name) else { return [] }
            return input.taps.filter { $0.node == name }.map { .tap($0.state, b) }
                + input.meters.filter { $0.node == name }.map { .meter($0.state, b) }
        }
    }
}
