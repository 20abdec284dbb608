// Control side. Following a change of the host's sample rate: every kernel designed for a rate is made
// again at the new one and swapped in with the next program (environments: EngineCore+EnvironmentRate).
import AudioDSP

extension EngineCore {
    /// The host's sample rate changed: later ramps and conversions use `rate`, and every effect, time
    /// effect, audioplayer rate stage, voice processor and environment (its state and every voice into
    /// it) is rebuilt at it with the values its node holds (its state, a reverb's tail or a canceller's
    /// learned echo path, starts again; changes scheduled for a later frame take effect at once, since
    /// the node already holds them). Returns problems, one per node that cannot follow: a voice
    /// processor beyond 8–96 kHz is bypassed.
    func setSampleRate(_ rate: Double) -> [String] {
        guard state.configuration.sampleRate != rate else { return [] }
        // HRTF sets are resampled to the engine rate when loaded.
        state.spatial.hrtfSets = [:]
        state.spatial.hrtfFailures = [:]
        state.configuration.sampleRate = rate
        var problems: [String] = []
        var rebuilt = false
        for node in state.graph.nodes.values {
            if node.kind == .audioplayer, let stage = node.rateStage {
                try? makeRateStage(node, channelCount: stage.fifo.pointee.bus.channelCount)
                rebuilt = true
            } else if node.kind.isEffect, let old = node.effect {
                node.effect = makeEffectKernel(node, setting: node.specs.indices)
                state.publishing.buryAfterPublish.append(RetiredEffect(effect: old))
                if node.kind == .timepitch { node[.latency] = .int(node.effect?.latencyFrames ?? 0) }
                rebuilt = true
            }
            if let old = node.voice {
                do throws(EngineError) {
                    node.voice = try makeVoiceStage(node, micChannels: old.pointee.micChannels)
                    node[.latency] = .int(node.voice?.pointee.latencyFrames ?? 0)
                    state.publishing.buryAfterPublish.append(RetiredVoiceStage(stage: old))
                    rebuilt = true
                } catch {
                    // The old stage cannot run at this rate: it passes the microphone through.
                    try? send(TimedCommand(.voiceSetting(old, .bypass, true)))
                    problems.append("\(error.message); it passes the microphone through until the rate is back")
                }
            }
            if node.environment != nil {
                problems += remakeEnvironment(node)
                rebuilt = true
            }
            if state.inserts.exposed[node.name] != nil {
                state.inserts.exposed[node.name]?.latencyFrames =
                    node.voice?.pointee.latencyFrames ?? node.effect?.latencyFrames ?? 0
                state.inserts.layoutVersion += 1
            }
        }
        if rebuilt { republish() }
        return problems
    }
}

/// An effect kernel replaced at a rate change, freed once no program or command reaches it.
final class RetiredEffect: CommandTargetOwner {
    let effect: EffectRef
    init(effect: EffectRef) { self.effect = effect }
    var commandTargets: [UnsafeMutableRawPointer] { [effect.raw] }
    deinit { effect.deallocate() }
}

/// A voice processor's stage replaced at a rate change, freed once no program or command reaches it.
final class RetiredVoiceStage: CommandTargetOwner {
    let stage: UnsafeMutablePointer<VoiceProcessorStage>
    init(stage: UnsafeMutablePointer<VoiceProcessorStage>) { self.stage = stage }
    var commandTargets: [UnsafeMutableRawPointer] { [UnsafeMutableRawPointer(stage)] }
    deinit { VoiceProcessorStage.free(stage) }
}
