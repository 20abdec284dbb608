// Control side, the API. Setting and getting node parameters.
// Each method takes the engine's lock and hands the work to `EngineCore` (EngineCore+Parameters.swift).
import AudioDSP

extension Engine {
    /// Sets `parameter` of `node`. Values are type-checked and range-checked against the node kind's
    /// `ParameterSpec`; an out-of-range value is refused (never clamped). Smoothed parameters glide over
    /// `configuration.rampDuration`.
    public func set(_ node: String, _ parameter: String, to value: ParameterValue) throws(EngineError) {
        try set(node, parameter, to: value, atSampleTime: nil)
    }

    /// Sets `parameter` at an engine sample time (nil: the next render cycle). Glides start, and player
    /// transport and material changes happen, exactly on that frame; a structural change (a mixer's
    /// channel count, a player's new channel count) reaches the graph at the next cycle.
    public func set(_ node: String, _ parameter: String, to value: ParameterValue, atSampleTime time: Int64?)
        throws(EngineError)
    {
        // A file is decoded before taking the lock, so a slow disk never stalls other control calls.
        var loaded: SampleBuffer?
        if parameter == "file", let path = value.stringValue, !path.isEmpty {
            let (kind, specs) = try control.withLock { core throws(EngineError) in
                let record = try core.record(node)
                return (record.kind, record.specs)
            }
            guard kind.isPlayer else { throw Engine.unknownParameter(parameter, kind: kind, node: node, specs: specs) }
            do {
                loaded = try loadFile(path)
            } catch {
                if kind == .audioplayer {
                    control.withLock { core in
                        core.state.publishing.pendingEvents.append(
                            .audioPlayerDecodeError(node: node, message: error.message))
                    }
                }
                throw error
            }
        }
        try control.withLock { core throws(EngineError) in
            try core.set(node, parameter, to: value, loadedFile: loaded, atSampleTime: time)
        }
        if parameter == "insert" { notifyInsertObserver() }
    }

    /// The current value of `parameter` of `node`.
    public func get(_ node: String, _ parameter: String) throws(EngineError) -> ParameterValue {
        try control.withLock { core throws(EngineError) in try core.get(node, parameter) }
    }

    /// Clears an effect's tails (reverb, delay lines, filter state): AVAudioEngine's `reset` for a node.
    public func resetNode(_ name: String) throws(EngineError) {
        try control.withLock { core throws(EngineError) in try core.resetNode(name) }
    }

    /// Not under the lock: decodes a file through the embedding layer's loader.
    func loadFile(_ path: String) throws(EngineError) -> SampleBuffer {
        guard let loader = fileLoader else {
            throw EngineError(.fileError, "file playback is not available in this engine")
        }
        let rate = configuration.sampleRate
        do {
            return try loader(path, rate)
        } catch let error as EngineError {
            throw error
        } catch {
            throw EngineError(.fileError, "\(error)")
        }
    }
}
