// Control side. Following a change of the host's sample rate in an environment: its render state and
// every voice of it made again at the new rate from the node's values, swapped in with the next program.
import AudioDSP

extension EngineCore {
    /// Rate change: makes the environment `node`'s state (reverb, return filter, gains) and every voice
    /// into it (Doppler line, occlusion and obstruction filters, spherical head, HRTF convolver, bed)
    /// again at the engine's rate, placed at once from the node's and the sources' values. The old ones
    /// are buried after the next program is published. HRTF sets load again at the new rate when a
    /// voice needs one (in a live engine on the worker: the voice renders with the spherical head until
    /// the set is ready). Returns problems, one per voice that could not be made again (it keeps its
    /// old design).
    func remakeEnvironment(_ node: NodeRecord) -> [String] {
        guard let old = node.environment else { return [] }
        let control = EnvironmentControl(
            layout: old.layout, sampleRate: state.configuration.sampleRate,
            maxBlockFrames: state.configuration.blockFrames)
        configure(control, from: node)
        // The sets of the old rate stay with the old state; the new one loads its own when a voice needs them.
        node.environment = control
        state.publishing.buryAfterPublish.append(old)
        var problems: [String] = []
        for key in Array(state.spatial.voices.keys) where key.environment == node.id {
            do throws(EngineError) {
                try remakeVoice(key, environment: node, control: control)
            } catch {
                problems.append("\(node.name): \(error.message); a source keeps its voice of the old rate")
            }
        }
        return problems
    }

    /// The voice `key` of `environment` made again for `control` at the engine's rate and placed at once
    /// (no program has seen it yet); the old one is buried after the next program is published.
    private func remakeVoice(_ key: VoiceKey, environment: NodeRecord, control: EnvironmentControl)
        throws(EngineError)
    {
        guard let old = state.spatial.voices[key],
            let source = state.graph.nodesByID[key.source]
                ?? state.graph.dyingNodes.values.first(where: { $0.item.id == key.source })?.item
        else { return }
        let record = SpatialVoiceRecord(
            sampleRate: state.configuration.sampleRate,
            maxBlockFrames: state.configuration.blockFrames, layout: control.layout)
        // Placed before it replaces the old voice: a target that cannot be made leaves the old one in use.
        let target = try voiceTarget(
            source: source, environment: environment, record: record, isNew: true, ramp: 0)
        EnvironmentRender.apply(target, to: record.voice)
        state.spatial.voices[key] = record
        if let index = source.spatialVoices.firstIndex(where: { $0.key == key }) {
            source.spatialVoices[index] = SourceVoice(key: key, environment: environment, record: record)
        }
        state.publishing.buryAfterPublish.append(old)
    }
}

/// An environment's state replaced at a rate change (or freed with its node): commands still waiting
/// for it are purged when it is buried.
extension EnvironmentControl: CommandTargetOwner {
    var commandTargets: [UnsafeMutableRawPointer] { [UnsafeMutableRawPointer(state)] }
}
