// Control side. AVAudioPlayer semantics for `audioplayer` nodes, built on the player schedule queue:
// prepare, play (now or at a time), pause, stop that keeps the position, seeking, loop counts, volume
// fades, metering and the finished / decode-error notifications.
import AudioDSP

/// What an audioplayer remembers between calls.
final class AudioPlayerControl {
    enum Transport { case stopped, playing, paused }

    /// The material: a decoded file or a named buffer, at the engine rate.
    var buffer: SampleBuffer?
    var transport: Transport = .stopped
    /// The file frame at player time 0 of the queued schedule (the position while stopped).
    var anchorFrame = 0
    /// True when the schedule holds passes from `anchorFrame` (prepared).
    var isScheduled = false
    /// Ids of the queued passes, oldest first.
    var queued: [Int32] = []
    /// Passes still to queue after `queued` (0: the last queued pass ends playback).
    var passesLeft = 0
    /// True when the queue ends in an item that loops until stopped.
    var loopsForever = false

    var frameCount: Int { buffer?.frameCount ?? 0 }
}

extension EngineCore {
    func prepareToPlay(_ node: String) throws(EngineError) -> Bool {
        let (record, audio) = try audioPlayer(node)
        guard audio.buffer != nil else { return false }
        if !audio.isScheduled { try schedulePasses(record, audio, time: -1) }
        return true
    }

    func fadeVolume(
        _ node: String, to volume: Double, over seconds: Double,
        atSampleTime time: Int64? = nil
    ) throws(EngineError) {
        let record = try record(node)
        guard record.kind.hasMixingSettings else {
            throw EngineError(.notAllowed, "'\(node)' (\(record.kind.rawValue)) has no volume")
        }
        guard volume.isFinite, (0...1).contains(volume) else {
            throw EngineError(.outOfRange, "\(node).volume: \(volume) is outside 0…1")
        }
        guard seconds.isFinite, seconds >= 0, seconds <= 3600 else {
            throw EngineError(.outOfRange, "fade duration \(seconds) s is outside 0…3600")
        }
        record[.volume] = .float(volume)
        let t = record.mixingTargets
        let frames = Int32(max(1, (seconds * state.configuration.sampleRate).rounded()))
        try send([
            TimedCommand(
                time: time ?? -1,
                .setMixing(
                    record.mixing, left: t.left, right: t.right,
                    mono: t.mono, rampFrames: frames))
        ])
    }

    func audioPlayerPower(_ node: String) throws(EngineError) -> [(average: Float, peak: Float)] {
        let (record, _) = try audioPlayer(node)
        guard let meter = state.monitors.meters[node], record.bool(.meteringEnabled) else {
            throw EngineError(.notAllowed, "\(node): metering is off (set meteringEnabled first)")
        }
        return meter.takePlayerLevels().map { (min(0, $0.rmsDecibels), min(0, $0.peakDecibels)) }
    }

    // MARK: Helpers

    func audioPlayer(_ name: String) throws(EngineError) -> (NodeRecord, AudioPlayerControl) {
        let node = try record(name)
        guard node.kind == .audioplayer, let audio = node.audio else {
            throw EngineError(.notAllowed, "'\(name)' is a \(node.kind.rawValue), not an audioplayer")
        }
        return (node, audio)
    }

    /// The file frame playing now (or where a paused or stopped player stands).
    func currentFrame(_ node: NodeRecord, _ audio: AudioPlayerControl) -> Int {
        let count = audio.frameCount
        guard count > 0 else { return 0 }
        guard audio.isScheduled, audio.transport != .stopped else { return min(audio.anchorFrame, count) }
        var elapsed: Int64 = 0
        if let t = node.transport {
            elapsed = renderedPlayerTime(node, at: Int64(renderEngine.renderedFrames)) ?? t.playerTime
        }
        let frame = Int64(audio.anchorFrame) + max(0, elapsed)
        if frame < Int64(count) { return Int(frame) }
        // Later passes play the whole material from its start.
        return Int((frame - Int64(count)) % Int64(count))
    }

    /// Replaces the schedule with passes from `audio.anchorFrame`, at engine frame `time` (-1: next
    /// cycle). Leaves the player paused on a fresh timeline (play follows with `.playerPlay`).
    func schedulePasses(_ node: NodeRecord, _ audio: AudioPlayerControl, time: Int64) throws(EngineError) {
        guard let player = node.player, let buffer = audio.buffer else { return }
        let count = buffer.frameCount
        let start = min(max(0, audio.anchorFrame), count - 1)
        audio.anchorFrame = start
        try batch { () throws(EngineError) in
            // Drops every queued item (reported as not completed) and rewinds the timeline to 0.
            try send([TimedCommand(time: time, .playerStop(player))])
            node.transport = nil
            audio.queued = []
            let loops = node.int(.numberOfLoops)
            audio.loopsForever = loops < 0
            if audio.loopsForever {
                if start > 0 {
                    try queuePass(node, audio, buffer, from: start, last: false, looping: false, time: time)
                }
                try queuePass(node, audio, buffer, from: 0, last: false, looping: true, time: time)
                audio.passesLeft = 0
            } else {
                var left = loops + 1
                let ahead = Engine.passesAhead(frameCount: count, sampleRate: state.configuration.sampleRate)
                var from = start
                while left > 0 && audio.queued.count < ahead {
                    left -= 1
                    try queuePass(node, audio, buffer, from: from, last: left == 0, looping: false, time: time)
                    from = 0
                }
                audio.passesLeft = left
            }
        }
        audio.isScheduled = true
        if audio.transport == .playing { audio.transport = .paused }
    }

    /// `numberOfLoops` set while a schedule stands (playing or paused): the pass playing now finishes,
    /// then `loops` more passes follow (until stopped when negative), so 0 ends playback at the end of
    /// the current pass. A stopped player takes the new count at its next play or seek.
    func audioSetLoops(_ node: NodeRecord, _ audio: AudioPlayerControl, _ loops: Int, time: Int64) throws(EngineError) {
        guard audio.isScheduled, audio.transport != .stopped, let player = node.player, let buffer = audio.buffer,
            !audio.queued.isEmpty
        else { return }
        try batch { () throws(EngineError) in
            try send([TimedCommand(time: time, .playerFinishCurrent(player, pausesAtEnd: loops == 0))])
            // The dropped items are reported later as not completed, and are no longer expected.
            audio.queued = Array(audio.queued.prefix(1))
            audio.loopsForever = loops < 0
            audio.passesLeft = 0
            if audio.loopsForever {
                try queuePass(node, audio, buffer, from: 0, last: false, looping: true, time: time)
            } else {
                var left = loops
                let ahead = Engine.passesAhead(
                    frameCount: buffer.frameCount, sampleRate: state.configuration.sampleRate)
                while left > 0 && audio.queued.count <= ahead {
                    left -= 1
                    try queuePass(node, audio, buffer, from: 0, last: left == 0, looping: false, time: time)
                }
                audio.passesLeft = left
            }
        }
    }

    /// Appends one pass `from ..< end` (or the whole material, looping until stopped).
    private func queuePass(
        _ node: NodeRecord, _ audio: AudioPlayerControl, _ buffer: SampleBuffer, from: Int,
        last: Bool, looping: Bool, time: Int64
    ) throws(EngineError) {
        let id = try enqueue(
            node, buffer, startFrame: from, frameCount: buffer.frameCount - from, playerTime: nil,
            options: looping ? [.loops] : [], completion: nil, isMaterial: false, commandTime: time,
            pausesAtEnd: last)
        audio.queued.append(id)
    }

    /// Play (AVAudioPlayer.play / play(atTime:)): resumes a paused player, or schedules from the
    /// current time and starts.
    func audioPlay(_ node: NodeRecord, _ audio: AudioPlayerControl, time: Int64) throws(EngineError) {
        guard let player = node.player else { return }
        guard audio.buffer != nil else {
            throw EngineError(.notAllowed, "\(node.name): nothing to play (set file or buffer first)")
        }
        if audio.transport == .playing { return }
        try batch { () throws(EngineError) in
            if !audio.isScheduled { try schedulePasses(node, audio, time: time) }
            try send([TimedCommand(time: time, .playerPlay(player))])
        }
        audio.transport = .playing
        node[.playing] = .bool(true)
    }

    /// Pause: keeps the position and the prepared schedule.
    func audioPause(_ node: NodeRecord, _ audio: AudioPlayerControl, time: Int64) throws(EngineError) {
        guard let player = node.player, audio.transport == .playing else { return }
        try send([TimedCommand(time: time, .playerPause(player))])
        audio.transport = .paused
        node[.playing] = .bool(false)
    }

    /// Stop: unschedules (releasing what the schedule held) but keeps the position, as AVAudioPlayer does.
    func audioStop(_ node: NodeRecord, _ audio: AudioPlayerControl, time: Int64) throws(EngineError) {
        guard let player = node.player else { return }
        let frame = currentFrame(node, audio)
        if audio.isScheduled { try send([TimedCommand(time: time, .playerStop(player))]) }
        audio.anchorFrame = frame
        audio.isScheduled = false
        audio.queued = []
        audio.transport = .stopped
        node[.playing] = .bool(false)
        // The meters start again from the stop: the next reading is not the playing that came before.
        _ = state.monitors.meters[node.name]?.takePlayerLevels()
    }

    /// Seek (setting currentTime): jumps at once, also while playing (same render cycle).
    func audioSeek(_ node: NodeRecord, _ audio: AudioPlayerControl, seconds: Double, time: Int64) throws(EngineError) {
        let count = audio.frameCount
        let frame = min(max(0, Int((seconds * state.configuration.sampleRate).rounded())), max(0, count - 1))
        audio.anchorFrame = frame
        guard audio.buffer != nil, let player = node.player else { return }
        switch audio.transport {
        case .stopped:
            audio.isScheduled = false
        case .paused:
            try schedulePasses(node, audio, time: time)
        case .playing:
            try batch { () throws(EngineError) in
                try schedulePasses(node, audio, time: time)
                try send([TimedCommand(time: time, .playerPlay(player))])
            }
            audio.transport = .playing
        }
    }

    /// New material (the `file` or `buffer` parameter): stops, rewinds and reshapes the node.
    func audioSetMaterial(_ node: NodeRecord, _ audio: AudioPlayerControl, _ buffer: SampleBuffer?) throws(EngineError)
    {
        try audioStop(node, audio, time: -1)
        if let old = audio.buffer, old !== buffer { bury(old) }
        audio.buffer = buffer
        audio.anchorFrame = 0
        node[.duration] = .float(Double(buffer?.frameCount ?? 0) / state.configuration.sampleRate)
        if let buffer, buffer.channelCount != node.outputChannelCount {
            node.outputChannelCount = buffer.channelCount
            node[.channels] = .int(buffer.channelCount)
            if node.rateStage != nil { try makeRateStage(node, channelCount: buffer.channelCount) }
            let t = node.mixingTargets
            try send([
                TimedCommand(
                    .setMixing(
                        node.mixing, left: t.left, right: t.right, mono: t.mono,
                        rampFrames: state.configuration.rampFrames))
            ])
            republish()
        }
    }

    /// A pass ended (poll): queue the next one, or report the end of playback.
    func audioPassEnded(
        _ node: NodeRecord, _ audio: AudioPlayerControl, id: Int32, completed: Bool,
        into events: inout [EngineEvent]
    ) {
        guard let index = audio.queued.firstIndex(of: id) else { return }
        audio.queued.remove(at: index)
        guard completed, let buffer = audio.buffer else { return }
        if audio.passesLeft > 0 {
            audio.passesLeft -= 1
            try? queuePass(node, audio, buffer, from: 0, last: audio.passesLeft == 0, looping: false, time: -1)
        } else if audio.queued.isEmpty && !audio.loopsForever {
            // The last pass paused the player at its end: rewind, as AVAudioPlayer does.
            audio.transport = .stopped
            audio.isScheduled = false
            audio.anchorFrame = 0
            node[.playing] = .bool(false)
            events.append(.audioPlayerFinished(node: node.name, successfully: true))
        }
    }
}

extension EngineCore {
    /// Gives an audioplayer created with `enableRate` its time-pitch stage for `channelCount` channels,
    /// at the node's `rate` (the node's program is rebuilt by the caller).
    func makeRateStage(_ node: NodeRecord, channelCount: Int) throws(EngineError) {
        let config = state.configuration
        guard
            let effect = EffectRef.make(
                .timepitch, sampleRate: config.sampleRate, maxBlockFrames: config.blockFrames,
                channelCount: channelCount, bandCount: 1, spares: timePitchSpares)
        else { return }
        effect.setInitial(TimePitchKernel.Parameter.rate.rawValue, node.double(.rate) == 0 ? 1 : node.double(.rate))
        if let old = node.rateStage, let oldEffect = node.effect {
            // Still referenced by the installed program: released with the generation that drops it.
            state.publishing.buryAfterPublish.append(RetiredRateStage(stage: old, effect: oldEffect))
        }
        node.effect = effect
        node.rateStage = RateStage(channelCount: channelCount, maxBlockFrames: config.blockFrames)
    }

    /// Sets the time-pitch rate of an audioplayer created with `enableRate`.
    func setAudioPlayerRate(_ node: NodeRecord, _ rate: Double, time: Int64) throws(EngineError) {
        guard let effect = node.effect else { return }
        try send(
            TimedCommand(
                time: time,
                .effectParameter(
                    effect, index: Int32(TimePitchKernel.Parameter.rate.rawValue),
                    value: rate)))
    }
}

/// A replaced rate stage and its kernel, freed together once no program uses them.
final class RetiredRateStage {
    let stage: RateStage
    let effect: EffectRef

    init(stage: RateStage, effect: EffectRef) {
        self.stage = stage
        self.effect = effect
    }

    deinit { effect.deallocate() }
}

// The rules this subsystem applies; pure, so they live on the front.
extension Engine {
    /// Passes queued ahead of the one playing: at least half a second of audio, at least two, at most
    /// 32 (the queue holds 64), so a short file loops seamlessly however late `poll()` runs.
    static func passesAhead(frameCount: Int, sampleRate: Double) -> Int {
        let half = Int((0.5 * sampleRate).rounded(.up))
        return min(32, max(2, (half + frameCount - 1) / max(1, frameCount)))
    }
}
