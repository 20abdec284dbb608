// Render side (dispatch) and control side (ownership). A typed pointer to one effect kernel.
import AudioDSP

/// Which effect a node runs, as a typed pointer to its kernel. The kernel's memory is owned by the
/// node's control-side record and freed through the graveyard.
public enum EffectRef: BitwiseCopyable {
    case reverb(UnsafeMutablePointer<ReverbKernel>)
    case delay(UnsafeMutablePointer<DelayKernel>)
    case distortion(UnsafeMutablePointer<DistortionKernel>)
    case eq(UnsafeMutablePointer<EQKernel>)
    case timePitch(UnsafeMutablePointer<TimePitchKernel>)
    case varispeed(UnsafeMutablePointer<VarispeedKernel>)

    /// Control side: allocates the kernel for `kind` (nil for non-effect kinds). A time-pitch kernel
    /// comes from `spares` when one of that shape is ready.
    static func make(
        _ kind: NodeKind, sampleRate: Double, maxBlockFrames: Int, channelCount: Int, bandCount: Int,
        spares: TimePitchSpares? = nil
    ) -> EffectRef? {
        switch kind {
        case .reverb:
            let p = UnsafeMutablePointer<ReverbKernel>.allocate(capacity: 1)
            p.initialize(
                to: ReverbKernel(sampleRate: sampleRate, maxBlockFrames: maxBlockFrames, channelCount: channelCount))
            return .reverb(p)
        case .delay:
            let p = UnsafeMutablePointer<DelayKernel>.allocate(capacity: 1)
            p.initialize(
                to: DelayKernel(sampleRate: sampleRate, maxBlockFrames: maxBlockFrames, channelCount: channelCount))
            return .delay(p)
        case .distortion:
            let p = UnsafeMutablePointer<DistortionKernel>.allocate(capacity: 1)
            p.initialize(
                to: DistortionKernel(sampleRate: sampleRate, maxBlockFrames: maxBlockFrames, channelCount: channelCount)
            )
            return .distortion(p)
        case .eq:
            let p = UnsafeMutablePointer<EQKernel>.allocate(capacity: 1)
            p.initialize(
                to: EQKernel(
                    sampleRate: sampleRate, maxBlockFrames: maxBlockFrames, channelCount: channelCount,
                    bandCount: bandCount))
            return .eq(p)
        case .timepitch:
            let shape = TimePitchSpares.Shape(
                sampleRate: sampleRate, maxBlockFrames: maxBlockFrames,
                channelCount: channelCount)
            if let spare = spares?.take(shape) { return .timePitch(spare) }
            let p = UnsafeMutablePointer<TimePitchKernel>.allocate(capacity: 1)
            p.initialize(
                to: TimePitchKernel(sampleRate: sampleRate, maxBlockFrames: maxBlockFrames, channelCount: channelCount))
            return .timePitch(p)
        case .varispeed:
            let p = UnsafeMutablePointer<VarispeedKernel>.allocate(capacity: 1)
            p.initialize(
                to: VarispeedKernel(sampleRate: sampleRate, maxBlockFrames: maxBlockFrames, channelCount: channelCount))
            return .varispeed(p)
        default:
            return nil
        }
    }

    /// Processing latency in frames at rate 1 (reported to JACK for inserts).
    var latencyFrames: Int {
        switch self {
        case .timePitch(let p): return p.pointee.latencyFrames
        case .varispeed(let p): return p.pointee.latencyFrames
        default: return 0
        }
    }

    /// Control side: frees the kernel.
    func deallocate() {
        switch self {
        case .reverb(let p): p.pointee.deallocate(); p.deallocate()
        case .delay(let p): p.pointee.deallocate(); p.deallocate()
        case .distortion(let p): p.pointee.deallocate(); p.deallocate()
        case .eq(let p): p.pointee.deallocate(); p.deallocate()
        case .timePitch(let p): p.pointee.deallocate(); p.deallocate()
        case .varispeed(let p): p.pointee.deallocate(); p.deallocate()
        }
    }

    /// The kernel's address (for purging timed commands).
    var raw: UnsafeMutableRawPointer {
        switch self {
        case .reverb(let p): return UnsafeMutableRawPointer(p)
        case .delay(let p): return UnsafeMutableRawPointer(p)
        case .distortion(let p): return UnsafeMutableRawPointer(p)
        case .eq(let p): return UnsafeMutableRawPointer(p)
        case .timePitch(let p): return UnsafeMutableRawPointer(p)
        case .varispeed(let p): return UnsafeMutableRawPointer(p)
        }
    }

    /// Control side, before the node is visible: applies a parameter directly (no glide).
    func setInitial(_ index: Int, _ value: Double) {
        switch self {
        case .reverb(let p): p.pointee.setParameter(index, value: value)
        case .delay(let p): p.pointee.setParameter(index, value: value)
        case .distortion(let p): p.pointee.setParameter(index, value: value)
        case .eq(let p): p.pointee.setParameter(index, value: value)
        case .timePitch(let p): p.pointee.setParameter(index, value: value)
        case .varispeed(let p): p.pointee.setParameter(index, value: value)
        }
    }

    func setInitialBypass(_ bypassed: Bool) {
        switch self {
        case .reverb(let p): p.pointee.setBypass(bypassed)
        case .delay(let p): p.pointee.setBypass(bypassed)
        case .distortion(let p): p.pointee.setBypass(bypassed)
        case .eq(let p): p.pointee.setBypass(bypassed)
        case .timePitch(let p): p.pointee.setBypass(bypassed)
        case .varispeed(let p): p.pointee.setBypass(bypassed)
        }
    }
}
