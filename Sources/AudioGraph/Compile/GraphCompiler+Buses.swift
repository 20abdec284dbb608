// Control side. The compile's bus phase: every active node's buses laid out in one zeroed slab, and
// the sizes of the mixer and environment input tables the step phase fills.
import AudioDSP

extension GraphCompiler {
    /// One bus per active node (the output node's bus holds what goes to the host); effects, voice
    /// processors (their microphone) and audioplayers with a time-pitch stage also get an input bus their
    /// sources are summed into; such an audioplayer's own player renders into a third (its stage writes
    /// the node's bus), and a voice processor sums its reference into one of its reference's width.
    struct BusLayout {
        let nodes: [String: NodeRecord]
        let stride: Int
        private(set) var output: [String: Int] = [:]
        private(set) var input: [String: Int] = [:]
        private(set) var stage: [String: Int] = [:]
        private(set) var reference: [String: Int] = [:]
        /// Zeroed; owned by the program once compiled.
        let slab: UnsafeMutableBufferPointer<Float>

        init(order: [String], nodes: [String: NodeRecord], stride: Int) {
            self.nodes = nodes
            self.stride = stride
            var total = 0
            for name in order {
                guard let node = nodes[name] else { continue }
                output[name] = total
                total += node.outputChannelCount * stride
                if node.kind.isEffect || node.voice != nil || node.rateStage != nil {
                    input[name] = total
                    total += node.outputChannelCount * stride
                }
                if node.rateStage != nil {
                    stage[name] = total
                    total += node.outputChannelCount * stride
                }
                if let voice = node.voice {
                    reference[name] = total
                    total += voice.pointee.referenceChannels * stride
                }
            }
            slab = UnsafeMutableBufferPointer<Float>.allocate(capacity: max(1, total))
            slab.initialize(repeating: 0)
        }

        /// Node `name`'s output bus.
        func bus(_ name: String) -> BusRef? {
            guard let offset = output[name], let node = nodes[name] else { return nil }
            return bus(at: offset, channels: node.outputChannelCount)
        }

        /// The input bus of an effect or a rate-staged audioplayer.
        func inputBus(_ name: String) -> BusRef? {
            guard let offset = input[name], let node = nodes[name] else { return nil }
            return bus(at: offset, channels: node.outputChannelCount)
        }

        /// The reference bus of a voice processor (bus 1's connections are summed into it).
        func referenceBus(_ name: String) -> BusRef? {
            guard let offset = reference[name], let voice = nodes[name]?.voice else { return nil }
            return bus(at: offset, channels: voice.pointee.referenceChannels)
        }

        /// The bus a rate-staged audioplayer's own player renders into.
        func stageBus(_ name: String) -> BusRef? {
            guard let offset = stage[name], let node = nodes[name] else { return nil }
            return bus(at: offset, channels: node.outputChannelCount)
        }

        private func bus(at offset: Int, channels: Int) -> BusRef {
            BusRef(data: slab.baseAddress! + offset, channelCount: channels, stride: stride)
        }
    }

    /// How many mixer-input and environment-input entries the program's tables hold.
    struct InputTableCapacity {
        var mixerInputs = 0
        var environmentInputs = 0
        /// Voice-processor steps (voice processors and inputs with voice processing).
        var voiceSteps = 0

        init(order: [String], input: Input, active: Set<String>) {
            func liveInputs(_ name: String) -> Int {
                input.connections.filter { $0.destination == name && active.contains($0.source) }.count
            }
            for name in order {
                guard let node = input.nodes[name] else { continue }
                let kind = node.kind
                if kind == .mixer || kind == .output || kind.isEffect || kind == .voiceprocessor {
                    mixerInputs += liveInputs(name)
                }
                if node.rateStage != nil { mixerInputs += 1 }
                if kind == .environment { environmentInputs += liveInputs(name) }
                if node.voice != nil { voiceSteps += 1 }
            }
        }
    }
}
