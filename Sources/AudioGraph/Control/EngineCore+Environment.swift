// Control side. The 3D environment: creating its state, one voice per source connection, and turning
// the listener's and the sources' properties into voice targets.
import AudioDSP

extension EngineCore {
    /// Glide of a voice update: one 60 Hz interval, so updates at frame rate join without steps.
    var spatialRampFrames: Int32 { Int32(SpatialTiming.defaultRampFrames(sampleRate: state.configuration.sampleRate)) }

    /// Creation of an environment node: its layout, render state and initial mix (not visible yet).
    func makeEnvironment(_ node: NodeRecord) throws(EngineError) {
        let index = NodeKind.environmentLayoutNames.firstIndex(of: node.string(.layout)) ?? 0
        var layout = SpeakerLayout.presets[index].layout
        if !node.string(.speakers).isEmpty { layout = try Engine.customLayout(node.string(.speakers), node: node.name) }
        let control = EnvironmentControl(
            layout: layout, sampleRate: state.configuration.sampleRate,
            maxBlockFrames: state.configuration.blockFrames)
        if !node.string(.hrtf).isEmpty {
            // Offline: loaded now (or taken from the engine's sets), so a file that is not a usable SOFA set
            // is refused at creation. Live: loaded on the worker (a set known to fail is refused at once);
            // the sources render with the spherical head until it is ready, and a failure is reported
            // (`environmentProblem`).
            do throws(HRTFLoadError) {
                control.datasets[.standard] = try hrtfSet(
                    HRTFSetKey(path: node.string(.hrtf), quality: .standard),
                    for: node, now: !state.spatial.loadsHRTFSetsInBackground)
            } catch {
                throw EngineError(.fileError, "\(node.name).hrtf: \(error)")
            }
        }
        guard node.double(.referenceDistance) <= node.double(.maximumDistance) else {
            throw EngineError(
                .outOfRange,
                "\(node.name): referenceDistance \(node.double(.referenceDistance)) must not "
                    + "exceed maximumDistance \(node.double(.maximumDistance))")
        }
        node.environment = control
        node.outputChannelCount = layout.channelCount
        node[.channels] = .int(layout.channelCount)
        configure(control, from: node)
    }

    /// Sets a new environment state (no program has seen it yet) to the node's reverb preset, reverb
    /// filter and mix, at once.
    func configure(_ control: EnvironmentControl, from node: NodeRecord) {
        if let preset = ReverbPreset.allNames.firstIndex(of: node.string(.reverbPreset)) {
            control.state.pointee.reverb.setParameter(ReverbKernel.Parameter.preset.rawValue, value: Double(preset))
        }
        for key in NodeKind.reverbFilterKeys {
            guard let index = NodeKind.reverbFilterIndex(key) else { continue }
            control.state.pointee.reverbFilter.setParameter(index, value: NodeKind.reverbFilterValue(key, node[key]))
        }
        let mix = environmentMix(node)
        control.state.pointee.reverbEnabled = mix.enabled
        control.state.pointee.reverbLevel.jump(to: mix.enabled ? mix.level : 0)
        control.state.pointee.outputVolume.jump(to: mix.volume)
    }

    private func environmentMix(_ node: NodeRecord) -> (enabled: Bool, level: Float, volume: Float) {
        let level = Float(EffectMath.decibelsToGain(node.double(.reverbLevel)))
        return (node.bool(.reverb), level, Float(node.double(.outputVolume)))
    }

    /// A new connection `edge` from `source` into the environment `environment`: its voice, placed at
    /// once (no program has seen it yet).
    func makeVoice(_ edge: Connection, source: NodeRecord, environment: NodeRecord) throws(EngineError) {
        guard let control = environment.environment else { return }
        let key = VoiceKey(
            source: source.id, sourceBus: edge.sourceBus, environment: environment.id, bus: edge.destinationBus)
        if state.spatial.voices[key] != nil {
            try updateVoice(key, time: -1)
            return
        }
        let record = SpatialVoiceRecord(
            sampleRate: state.configuration.sampleRate,
            maxBlockFrames: state.configuration.blockFrames, layout: control.layout)
        state.spatial.voices[key] = record
        source.spatialVoices.append(SourceVoice(key: key, environment: environment, record: record))
        let target = try voiceTarget(source: source, environment: environment, record: record, isNew: true, ramp: 0)
        EnvironmentRender.apply(target, to: record.voice)
    }

    /// Re-places every voice fed by `source` (after one of its 3D properties changed).
    func updateVoices(source: NodeRecord, time: Int64) throws(EngineError) {
        // Indexed rather than iterated: an unspecialized (debug) iterator allocates per element.
        var index = 0
        while index < source.spatialVoices.count {
            let voice = source.spatialVoices[index]
            let target = try voiceTarget(
                source: source, environment: voice.environment, record: voice.record,
                isNew: false, ramp: spatialRampFrames)
            try send(time: time, .spatialVoice(voice.record.voice, target))
            index += 1
        }
    }

    /// Re-places every voice of `environment` (after the listener or a model parameter changed).
    func updateVoices(environment: NodeRecord, time: Int64) throws(EngineError) {
        for key in state.spatial.voices.keys where key.environment == environment.id {
            try updateVoice(key, time: time)
        }
    }

    private func updateVoice(_ key: VoiceKey, time: Int64) throws(EngineError) {
        guard let record = state.spatial.voices[key], let source = state.graph.nodesByID[key.source],
            let environment = state.graph.nodesByID[key.environment]
        else { return }
        let target = try voiceTarget(
            source: source, environment: environment, record: record, isNew: false,
            ramp: spatialRampFrames)
        try send(time: time, .spatialVoice(record.voice, target))
    }

    /// Frees the voices whose connections have left the graph (after their fades). From `poll()`.
    /// Runs only after the graph was published again (every change of connections publishes).
    func pruneVoices() {
        guard !state.spatial.voices.isEmpty, state.spatial.voicesPrunedAtGeneration != state.publishing.generation
        else { return }
        state.spatial.voicesPrunedAtGeneration = state.publishing.generation
        var live: Set<VoiceKey> = []
        for edge in state.graph.connections + state.graph.retiringEdges.map(\.item.connection) {
            guard let source = state.graph.nodes[edge.source] ?? state.graph.dyingNodes[edge.source]?.item,
                let destination = state.graph.nodes[edge.destination] ?? state.graph.dyingNodes[edge.destination]?.item,
                destination.kind == .environment
            else { continue }
            live.insert(
                VoiceKey(
                    source: source.id, sourceBus: edge.sourceBus, environment: destination.id,
                    bus: edge.destinationBus))
        }
        for key in Array(state.spatial.voices.keys) where !live.contains(key) {
            if let record = state.spatial.voices.removeValue(forKey: key) { bury(record) }
            let source =
                state.graph.nodesByID[key.source]
                ?? state.graph.dyingNodes.values.first { $0.item.id == key.source }?.item
            source?.spatialVoices.removeAll { $0.key == key }
        }
    }

    /// The environment's listener and models (cached until one of its parameters changes).
    private func environmentModel(_ environment: NodeRecord) -> EnvironmentModel {
        if let model = environment.environment?.model { return model }
        let modelIndex = NodeKind.distanceModelNames.firstIndex(of: environment.string(.distanceModel)) ?? 2
        let model = EnvironmentModel(
            listener: SpatialVector(
                environment.double(.listenerX), environment.double(.listenerY),
                environment.double(.listenerZ)),
            orientation: ListenerOrientation(
                yawDegrees: environment.double(.listenerYaw),
                pitchDegrees: environment.double(.listenerPitch),
                rollDegrees: environment.double(.listenerRoll)),
            distance: DistanceAttenuation(
                model: NodeKind.distanceModels[modelIndex], referenceDistance: environment.double(.referenceDistance),
                maximumDistance: environment.double(.maximumDistance), rolloffFactor: environment.double(.rolloffFactor)
            ),
            doppler: DopplerShift(
                speedOfSound: environment.double(.speedOfSound),
                dopplerFactor: environment.double(.dopplerFactor)),
            headphones: environment.bool(.headphones))
        environment.environment?.model = model
        return model
    }

    /// The source's 3D properties (cached until one of them changes; `setVector` updates the cache).
    @inline(__always)
    private func sourceProperties(_ source: NodeRecord) -> SpatialSourceProperties {
        if let properties = source.spatialProperties { return properties }
        return readSourceProperties(source)
    }

    /// `sourceProperties` read from the source's parameters, and cached.
    private func readSourceProperties(_ source: NodeRecord) -> SpatialSourceProperties {
        guard source.kind.is3DSource else {
            // A kind without 3D properties (an effect, an environment) feeding an environment: every
            // number 0, the default algorithm, no source mode, as such a node has always been placed.
            let properties = SpatialSourceProperties(
                position: .zero, velocity: .zero, facing: .zero,
                cone: ConeAttenuation(innerAngleDegrees: 0, outerAngleDegrees: 0, outerGain: 0),
                reverbBlend: 0, obstruction: 0, occlusion: 0, requested: .equalPowerPanning, bypasses: false,
                spatializesOnlyMono: false, rendersBed: false)
            source.spatialProperties = properties
            return properties
        }
        let properties = SpatialSourceProperties(
            position: SpatialVector(source.double(.positionX), source.double(.positionY), source.double(.positionZ)),
            velocity: SpatialVector(source.double(.velocityX), source.double(.velocityY), source.double(.velocityZ)),
            facing: SpatialVector(source.double(.directionX), source.double(.directionY), source.double(.directionZ)),
            cone: ConeAttenuation(
                innerAngleDegrees: source.double(.coneInnerAngle),
                outerAngleDegrees: source.double(.coneOuterAngle),
                outerGain: source.double(.coneOuterGain)),
            reverbBlend: source.double(.reverbBlend), obstruction: source.double(.obstruction),
            occlusion: source.double(.occlusion),
            requested: SpatialRenderingAlgorithm(name: source.string(.renderingAlgorithm)) ?? .equalPowerPanning,
            bypasses: source.string(.sourceMode) == "bypass",
            spatializesOnlyMono: source.string(.sourceMode) == "spatializeIfMono",
            rendersBed: source.string(.sourceMode) == "ambienceBed")
        source.spatialProperties = properties
        return properties
    }

    /// The target of the voice `source` → `environment`: direction from the listener, distance and
    /// cone gains, Doppler ratio, occlusion, obstruction, reverb blend and the resolved algorithm. Makes
    /// (or replaces) the HRTF convolver when the algorithm needs one, and loads its HRIRs.
    func voiceTarget(
        source: NodeRecord, environment: NodeRecord, record: SpatialVoiceRecord, isNew: Bool,
        ramp: Int32
    ) throws(EngineError) -> SpatialVoiceTarget {
        try voiceTarget(
            source: source, environment: environment, record: record, model: environmentModel(environment),
            properties: sourceProperties(source), isNew: isNew, ramp: ramp)
    }

    /// `voiceTarget` with the environment's model and the source's properties already read (a run of
    /// moves reads each once, not once per voice).
    private func voiceTarget(
        source: NodeRecord, environment: NodeRecord, record: SpatialVoiceRecord, model: EnvironmentModel,
        properties p: SpatialSourceProperties, isNew: Bool, ramp: Int32
    ) throws(EngineError) -> SpatialVoiceTarget {
        let direction = SourceDirection(source: p.position, listener: model.listener, orientation: model.orientation)
        let ratio =
            p.velocity == .zero
            ? 1
            : model.doppler.pitchRatio(
                sourcePosition: p.position, sourceVelocity: p.velocity, listenerPosition: model.listener,
                listenerVelocity: .zero)
        var algorithm = p.requested.resolved(
            outputChannelCount: environment.outputChannelCount,
            isHeadphones: model.headphones)
        let passes =
            algorithm == .stereoPassThrough || p.bypasses
            || (p.spatializesOnlyMono && source.outputChannelCount > 1)
        if p.rendersBed && !passes {
            // Far field around the listener: no distance, cone or Doppler; turned by the source's front
            // and the listener's orientation.
            try prepareBed(record, channelCount: max(1, source.outputChannelCount), isNew: isNew)
            return SpatialVoiceTarget(
                direction: SourceDirection(), gain: 1, reverbBlend: 0, obstructionDecibels: 0, occlusionDecibels: 0,
                dopplerRatio: 1, algorithm: .soundField, passesThrough: false, rendersBed: true,
                bedRotation: SpatialRotation(bedFacing: p.facing, orientation: model.orientation), rampFrames: ramp)
        }
        if (algorithm == .hrtf || algorithm == .hrtfHQ) && !passes {
            switch try prepareHRTF(
                record, environment: environment, quality: algorithm == .hrtfHQ ? .high : .standard,
                direction: direction, isNew: isNew)
            {
            case .ready:
                break
            case .loading:
                // The set loads on a worker: the voice keeps the algorithm it had (the spherical head when
                // it had none, or when that was the other HRTF mode and its set is gone) until it is ready.
                algorithm = try keptAlgorithm(record, environment: environment, direction: direction, isNew: isNew)
            case .unavailable:
                algorithm = .sphericalHead
            }
        }
        record.algorithm = algorithm
        // A source facing nowhere is omnidirectional: its cone gain is 1 (as `ConeAttenuation` finds).
        let gain = Float(
            model.distance.gain(distance: direction.distance)
                * (p.facing == .zero
                    ? 1 : p.cone.gain(source: p.position, direction: p.facing, listener: model.listener)))
        return SpatialVoiceTarget(
            direction: direction, gain: gain.isFinite ? gain : 0, reverbBlend: p.reverbBlend,
            obstructionDecibels: p.obstruction, occlusionDecibels: p.occlusion,
            dopplerRatio: ratio.isFinite ? ratio : 1, algorithm: algorithm, passesThrough: passes, rampFrames: ramp)
    }

    /// Makes sure the voice has an ambience bed for `channelCount` channels (a new one when the source's
    /// channel count changed).
    private func prepareBed(_ record: SpatialVoiceRecord, channelCount: Int, isNew: Bool) throws(EngineError) {
        if let bed = record.bed, bed.pointer.pointee.channelCount == channelCount { return }
        let bed = OwnedBed(channelCount: channelCount)
        if isNew {
            record.voice.pointee.bed = bed.pointer
        } else {
            try send(TimedCommand(.spatialBed(record.voice, bed.pointer)))
            if let old = record.bed { bury(old) }
        }
        record.bed = bed
    }

    /// Makes sure the voice has a convolver of `quality` from the environment's HRTF set and loads the
    /// HRIRs for `direction`. Returns false when no set can be loaded (the voice falls back to the
    /// spherical head, and the reason is reported as an event).
    ///
    /// Each quality has its own set (SoundstageKit's source prepares 64 or 128 minimum-phase taps at
    /// 48 kHz). Both qualities interpolate (`HRTFQuality.interpolates`); HRTF on direction cells, so a
    /// direction in the cell already published publishes nothing and the render side starts no crossfade.
    private func prepareHRTF(
        _ record: SpatialVoiceRecord, environment: NodeRecord, quality: HRTFQuality,
        direction: SourceDirection, isNew: Bool
    ) throws(EngineError) -> HRTFReadiness {
        if holdsCell(record, environment: environment, quality: quality, direction: direction) { return .ready }
        guard let control = environment.environment else { return .unavailable }
        if control.datasets[quality] == nil {
            let path = environment.string(.hrtf).isEmpty ? defaultHRTFPath : environment.string(.hrtf)
            do throws(HRTFLoadError) {
                // nil: loading in the background; the voice renders with the spherical head meanwhile.
                guard let set = try hrtfSet(HRTFSetKey(path: path, quality: quality), for: environment, now: false)
                else {
                    return .loading
                }
                control.datasets[quality] = set
            } catch {
                state.publishing.pendingEvents.append(.environmentProblem(node: environment.name, message: "\(error)"))
                return .unavailable
            }
        }
        guard let dataset = control.datasets[quality] else { return .unavailable }
        let convolver: OwnedConvolver
        var isFresh = false
        if let existing = record.convolver, existing.quality == quality {
            convolver = existing
        } else {
            convolver = OwnedConvolver(
                dataset.makeConvolver(
                    maxBlockFrames: state.configuration.blockFrames,
                    quality: quality), quality: quality)
            isFresh = true
        }
        let slot = convolver.pointer.pointee.exchange.writableSlot
        if quality.interpolates {
            // HRTF interpolates on cells (`HRTFQuality.cellKey`): nothing is published within one.
            let cell = quality.cellKey(for: direction)
            if cell >= 0 && cell == convolver.publishedKey { return .ready }
            dataset.fill(slot, direction: quality.cellCentre(cell) ?? direction, interpolated: true)
            convolver.publishedKey = cell >= 0 ? cell : nil
        } else {
            let key = dataset.nearestKey(for: direction, hint: convolver.publishedKey ?? -1)
            if key == convolver.publishedKey { return .ready }
            dataset.fill(slot, nearestKey: key)
            convolver.publishedKey = key
        }
        convolver.pointer.pointee.exchange.publish()
        if isFresh {
            if isNew {
                record.voice.pointee.hrtf = convolver.pointer
            } else {
                try send([TimedCommand(.spatialConvolver(record.voice, convolver.pointer))])
                if let old = record.convolver { bury(old) }
            }
            record.convolver = convolver
        }
        return .ready
    }

    /// The algorithm a voice keeps while the set its new HRTF mode needs is loading: the one it had,
    /// kept up to date with the source's direction, or the spherical head.
    /// Whether the voice's convolver already holds the HRIRs of `direction`'s cell, as `prepareHRTF` finds
    /// below for the frequent move (an interpolating quality, its set and convolver there, the same cell):
    /// nothing to load, make or publish. Reads without retaining: `environment` holds its control and
    /// `record` its convolver, and nothing here changes either.
    private func holdsCell(
        _ record: SpatialVoiceRecord, environment: NodeRecord, quality: HRTFQuality, direction: SourceDirection
    ) -> Bool {
        guard quality.interpolates, let control = environment.environment.map(Unmanaged.passUnretained),
            let convolver = record.convolver.map(Unmanaged.passUnretained)
        else { return false }
        return control._withUnsafeGuaranteedRef { control in
            convolver._withUnsafeGuaranteedRef { convolver in
                let hasSet = quality == .standard ? control.datasets.standard != nil : control.datasets.high != nil
                guard hasSet, convolver.quality == quality else { return false }
                let cell = quality.cellKey(for: direction)
                return cell >= 0 && cell == convolver.publishedKey
            }
        }
    }

    private func keptAlgorithm(
        _ record: SpatialVoiceRecord, environment: NodeRecord, direction: SourceDirection,
        isNew: Bool
    ) throws(EngineError) -> SpatialRenderingAlgorithm {
        guard let previous = record.algorithm, !isNew else { return .sphericalHead }
        guard previous == .hrtf || previous == .hrtfHQ else { return previous }
        let ready = try prepareHRTF(
            record, environment: environment, quality: previous == .hrtfHQ ? .high : .standard,
            direction: direction, isNew: isNew)
        return ready == .ready ? previous : .sphericalHead
    }

    /// A live set on an environment node. Returns false for the keys the common path handles.
    func applyEnvironment(_ node: NodeRecord, _ key: ParameterKey, _ value: ParameterValue, time: Int64)
        throws(EngineError) -> Bool
    {
        guard let control = node.environment else { return false }
        control.model = nil
        switch key {
        case .reverb, .reverbLevel, .outputVolume:
            node[key] = value
            let mix = environmentMix(node)
            try send([
                TimedCommand(
                    time: time,
                    .environmentMix(
                        control.state, reverbEnabled: mix.enabled,
                        reverbLevel: mix.level, outputVolume: mix.volume,
                        rampFrames: state.configuration.rampFrames))
            ])
        case .reverbFilterType, .reverbFilterFrequency, .reverbFilterBandwidth, .reverbFilterGain, .reverbFilterBypass:
            guard let index = NodeKind.reverbFilterIndex(key) else { return false }
            node[key] = value
            try send(
                TimedCommand(
                    time: time,
                    .environmentFilter(
                        control.state, index: Int32(index),
                        value: NodeKind.reverbFilterValue(key, value))))
        case .referenceDistance, .maximumDistance:
            let reference = key == .referenceDistance ? value.doubleValue ?? 1 : node.double(.referenceDistance)
            let maximum = key == .maximumDistance ? value.doubleValue ?? 1 : node.double(.maximumDistance)
            guard reference <= maximum else {
                throw EngineError(
                    .outOfRange,
                    "\(node.name): referenceDistance \(reference) must not exceed maximumDistance "
                        + "\(maximum)")
            }
            node[key] = value
            try updateVoices(environment: node, time: time)
        case .reverbPreset:
            node[key] = value
            let index = ReverbPreset.allNames.firstIndex(of: value.stringValue ?? "") ?? 0
            try send([TimedCommand(time: time, .environmentReverbPreset(control.state, Int32(index)))])
        case .hrtf:
            let path = value.stringValue ?? ""
            let file = path.isEmpty ? defaultHRTFPath : path
            let key = HRTFSetKey(path: file, quality: .standard)
            // A set named again is read again (the file may have changed, or been fixed after a failure);
            // environments already using the old one keep it.
            for quality in [HRTFQuality.standard, .high] {
                state.spatial.hrtfSets[HRTFSetKey(path: file, quality: quality)] = nil
                state.spatial.hrtfFailures[HRTFSetKey(path: file, quality: quality)] = nil
            }
            if state.spatial.loadsHRTFSetsInBackground, let source = hrtfSetSource {
                // Live: read on the worker, so no request waits for the file. The environment keeps its
                // set and its `hrtf` value until `poll()` adopts the new set; a file that fails changes
                // nothing and is reported (`environmentProblem`). The newest request wins.
                state.spatial.hrtfChanges[node.id] = PendingHRTFChange(key: key, value: value)
                if state.spatial.hrtfLoading.insert(key).inserted {
                    hrtfLoader.load(key, sampleRate: state.configuration.sampleRate, from: source)
                }
                return true
            }
            // Offline: loaded now, so a file that is not a usable SOFA set is refused and the previous
            // set stays.
            let dataset: (any HRIRSet)?
            do throws(HRTFLoadError) {
                dataset = try hrtfSet(key, for: node, now: true)
            } catch {
                throw EngineError(.fileError, "\(node.name).hrtf: \(error)")
            }
            state.spatial.hrtfChanges[node.id] = nil
            try useHRTFSet(dataset, value: value, on: node, time: time)
        case .volume, .pan:
            return false
        default:
            node[key] = value
            try updateVoices(environment: node, time: time)
        }
        return true
    }

    /// Makes `set` the standard-quality HRTF set of the environment `node`, whose `hrtf`
    /// becomes `value`: every voice drops its convolver and is placed again with the new set (a
    /// high-quality set is loaded from the new file when a voice needs one).
    func useHRTFSet(_ set: (any HRIRSet)?, value: ParameterValue, on node: NodeRecord, time: Int64)
        throws(EngineError)
    {
        guard let control = node.environment else { return }
        node[.hrtf] = value
        control.model = nil
        control.datasets = HRTFSets()
        control.datasets[.standard] = set
        for (key, record) in state.spatial.voices where key.environment == node.id {
            if let old = record.convolver {
                try send([TimedCommand(.spatialConvolver(record.voice, nil))])
                bury(old)
                record.convolver = nil
            }
        }
        try updateVoices(environment: node, time: time)
    }

    func setVector(
        _ node: String, _ name: String, _ x: Double, _ y: Double, _ z: Double,
        atSampleTime time: Int64? = nil
    ) throws(EngineError) {
        let record = try record(node)
        if let property = SpatialVectorProperty(name: name), record.kind.is3DSource {
            // The frequent case (a move at frame rate): no table search, no dictionary writes.
            let v = try checkedVector(record, property, x, y, z)
            var context = MoveContext(ramp: spatialRampFrames)
            try move(record, property, v, time: time ?? -1, context: &context)
            return
        }
        // Anything else (an environment's listener) by name, resolved once per coordinate.
        let table = record.table
        let vx = try Engine.validate(
            kind: record.kind, node: node, name + "X", .float(x), table: table, creating: false)
        let vy = try Engine.validate(
            kind: record.kind, node: node, name + "Y", .float(y), table: table, creating: false)
        let vz = try Engine.validate(
            kind: record.kind, node: node, name + "Z", .float(z), table: table, creating: false)
        record[vx.position] = vx.value
        record[vy.position] = vy.value
        record[vz.position] = vz.value
        if record.kind == .environment {
            record.environment?.model = nil
            try updateVoices(environment: record, time: time ?? -1)
        } else {
            record.spatialProperties = nil
            try updateVoices(source: record, time: time ?? -1)
        }
    }

    func nodeID(_ name: String) throws(EngineError) -> Int32 {
        try record(name).id
    }

    func moveSources(_ moves: UnsafeBufferPointer<SourceMove>, atSampleTime time: Int64? = nil)
        throws(EngineError)
    {
        // Checked first (all or nothing); the records found are kept for the moves, and for the next run.
        // Not retained: `state.graph.nodesByID` holds every node found, and nothing in a move detaches one.
        let version = state.graph.nodesByIDVersion
        var records = state.graph.moveRecords
        state.graph.moveRecords = []
        if state.graph.moveRecordsVersion != version { records.removeAll(keepingCapacity: true) }
        defer {
            state.graph.moveRecords = records
            state.graph.moveRecordsVersion = state.graph.nodesByIDVersion == version ? version : -1
        }
        var index = 0
        for m in moves {
            let found: Unmanaged<NodeRecord>
            if index < records.count && records[index].id == m.node {
                found = records[index].record
            } else {
                guard let record = state.graph.nodesByID[m.node] else {
                    throw EngineError(.unknownNode, "no node numbered \(m.node)")
                }
                found = Unmanaged.passUnretained(record)
                if index < records.count {
                    records[index] = (m.node, found)
                } else {
                    records.append((m.node, found))
                }
            }
            try withUnretained(found) { record throws(EngineError) in
                guard !record.isInternal else { throw EngineError(.unknownNode, "no node numbered \(m.node)") }
                guard record.kind.is3DSource else {
                    throw EngineError(.notAllowed, "'\(record.name)' is a \(record.kind.rawValue), not a 3D source")
                }
                _ = try checkedVector(record, m.property, m.x, m.y, m.z)
            }
            index += 1
        }
        var context = MoveContext(ramp: spatialRampFrames)
        try batch { () throws(EngineError) in
            var index = 0
            while index < moves.count {
                let m = moves[index]
                try withUnretained(records[index].record) { record throws(EngineError) in
                    try move(record, m.property, SpatialVector(m.x, m.y, m.z), time: time ?? -1, context: &context)
                }
                index += 1
            }
        }
    }

    func moveSources(_ moves: [SourceMove], atSampleTime time: Int64? = nil) throws(EngineError) {
        try moves.withUnsafeBufferPointer { buffer throws(EngineError) in try moveSources(buffer, atSampleTime: time) }
    }

    /// (x, y, z) as a vector of `property`, or the error naming the coordinate that is out of range.
    private func checkedVector(
        _ record: NodeRecord, _ property: SpatialVectorProperty, _ x: Double, _ y: Double,
        _ z: Double
    ) throws(EngineError) -> SpatialVector {
        let limit = property.limit
        if x.isFinite, y.isFinite, z.isFinite, abs(x) <= limit, abs(y) <= limit, abs(z) <= limit {
            return SpatialVector(x, y, z)
        }
        let keys = property.parameterKeys
        // The generic check names the parameter and its range.
        _ = try validate(record, keys.0, .float(x))
        _ = try validate(record, keys.1, .float(y))
        _ = try validate(record, keys.2, .float(z))
        throw EngineError(.outOfRange, "\(record.name).\(property): (\(x), \(y), \(z)) is out of range")
    }

    /// Moves a 3D source's vector and re-places its voices (`updateVoices(source:time:)` with the glide
    /// and each environment's model read once per run of moves, not once per voice).
    private func move(
        _ record: NodeRecord, _ property: SpatialVectorProperty, _ v: SpatialVector, time: Int64,
        context: inout MoveContext
    ) throws(EngineError) {
        // Read once (parsed on first use) and moved here as `record.move` moves the cached copy.
        var p = sourceProperties(record)
        record.move(property, to: v)
        switch property {
        case .position: p.position = v
        case .velocity: p.velocity = v
        case .direction: p.facing = v
        }
        // Indexed rather than iterated: an unspecialized (debug) iterator allocates per element.
        var index = 0
        while index < record.spatialVoices.count {
            // Not retained: `record.spatialVoices` holds both and nothing in a move changes it (the lock
            // is held, so no detach or prune runs meanwhile).
            let environment = Unmanaged.passUnretained(record.spatialVoices[index].environment)
            let voice = Unmanaged.passUnretained(record.spatialVoices[index].record)
            try withUnretained(environment) { environment throws(EngineError) in
                try withUnretained(voice) { voice throws(EngineError) in
                    if context.environment != ObjectIdentifier(environment) {
                        // The moves change no environment parameter, so its model stays valid for the run.
                        context.model = environmentModel(environment)
                        context.environment = ObjectIdentifier(environment)
                    }
                    let target = try voiceTarget(
                        source: record, environment: environment, record: voice, model: context.model!,
                        properties: p, isNew: false, ramp: context.ramp)
                    try send(time: time, .spatialVoice(voice.voice, target))
                }
            }
            index += 1
        }
    }

    func setListenerOrientation(
        _ node: String, forward: (Double, Double, Double), up: (Double, Double, Double),
        atSampleTime time: Int64? = nil
    ) throws(EngineError) {
        guard
            let orientation = ListenerOrientation(
                forward: SpatialVector(forward.0, forward.1, forward.2),
                up: SpatialVector(up.0, up.1, up.2))
        else {
            throw EngineError(.outOfRange, "\(node): forward and up must be non-zero and not parallel")
        }
        try setListenerAngles(
            node, yaw: orientation.yawDegrees, pitch: orientation.pitchDegrees,
            roll: orientation.rollDegrees, atSampleTime: time)
    }

    func setListenerAngles(
        _ node: String, yaw: Double, pitch: Double, roll: Double,
        atSampleTime time: Int64? = nil
    ) throws(EngineError) {
        let record = try record(node)
        guard record.kind == .environment else {
            throw EngineError(.notAllowed, "'\(node)' is a \(record.kind.rawValue), not an environment")
        }
        let yawValue = try validate(record, .listenerYaw, .float(yaw))
        let pitchValue = try validate(record, .listenerPitch, .float(pitch))
        let rollValue = try validate(record, .listenerRoll, .float(roll))
        record[.listenerYaw] = yawValue
        record[.listenerPitch] = pitchValue
        record[.listenerRoll] = rollValue
        record.environment?.model = nil
        try updateVoices(environment: record, time: time ?? -1)
    }
}

// The rules this subsystem applies; pure, so they live on the front.
extension Engine {
    /// A rig from `speakers`: comma- or space-separated azimuths in degrees, or `lfe`, one per channel.
    static func customLayout(_ text: String, node: String) throws(EngineError) -> SpeakerLayout {
        let entries = text.split(whereSeparator: { $0 == "," || $0 == " " }).map { $0.lowercased() }
        var azimuths: [Double] = []
        var lfe: [Int] = []
        for (channel, entry) in entries.enumerated() {
            if entry == "lfe" {
                lfe.append(channel)
            } else if let degrees = Double(entry), degrees.isFinite, (-180...180).contains(degrees) {
                azimuths.append(degrees)
            } else {
                throw EngineError(
                    .outOfRange, "\(node).speakers: '\(entry)' is neither an azimuth in −180…180 degrees nor lfe")
            }
        }
        guard (2...64).contains(entries.count), entries.count - lfe.count >= 2,
            let layout = SpeakerLayout(azimuthsDegrees: azimuths, lfeChannels: lfe)
        else {
            throw EngineError(
                .outOfRange, "\(node).speakers: a rig needs 2…64 channels with at least two distinct speakers")
        }
        return layout
    }

    /// The symmetric range of the vector `name` on `kind` (as its ParameterSpecs say), or nil when
    /// `kind` has no such vector (the generic check then reports it).
    static func vectorLimit(_ name: String, kind: NodeKind) -> Double? {
        if name == "listener" { return kind == .environment ? 1e6 : nil }
        guard let property = SpatialVectorProperty(name: name), kind.is3DSource else { return nil }
        return property.limit
    }
}

/// What a run of moves (`Engine.moveSources`, `Engine.setVector`) reads once rather than per voice: the
/// glide, and the model of the environment the last voice was in.
private struct MoveContext {
    let ramp: Int32
    var environment: ObjectIdentifier?
    var model: EnvironmentModel?

    init(ramp: Int32) {
        self.ramp = ramp
    }
}

/// `body(object)` without retaining `object`, for a caller that knows something else keeps it alive
/// throughout.
@inline(__always)
private func withUnretained<T: AnyObject>(_ object: Unmanaged<T>, _ body: (T) throws(EngineError) -> Void)
    throws(EngineError)
{
    var failure: EngineError?
    object._withUnsafeGuaranteedRef { instance in
        do throws(EngineError) { try body(instance) } catch { failure = error }
    }
    if let failure { throw failure }
}
