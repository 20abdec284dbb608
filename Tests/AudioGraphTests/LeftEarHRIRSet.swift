// Test support. An HRTF set with one filter for every direction: the left ear hears the source,
// `leftDelaySeconds` late at the rate the set was made for, and the right ear is silent.
import AudioDSP
@testable import AudioGraph

final class LeftEarHRIRSet: HRIRSet {
    private let left = UnsafeMutablePointer<Float>.allocate(capacity: 8)
    private let right = UnsafeMutablePointer<Float>.allocate(capacity: 8)
    private let sampleRate: Double
    private let leftDelaySeconds: Double
    private let maximumDelayFrames: Double

    init(sampleRate: Double, leftDelaySeconds: Double = 0, maximumDelayFrames: Double = 4) {
        self.sampleRate = sampleRate
        self.leftDelaySeconds = leftDelaySeconds
        self.maximumDelayFrames = maximumDelayFrames
        left.initialize(repeating: 0, count: 8)
        left[0] = 1
        right.initialize(repeating: 0, count: 8)
    }

    deinit {
        left.deallocate()
        right.deallocate()
    }

    func makeConvolver(maxBlockFrames: Int, quality: HRTFQuality) -> HRTFConvolver {
        HRTFConvolver(
            sampleRate: sampleRate, maxBlockFrames: maxBlockFrames, filterLength: 8,
            maximumDelayFrames: maximumDelayFrames,
            crossfadeFrames: quality.crossfadeFrames(sampleRate: sampleRate))
    }

    func fill(_ slot: HRIRSlot, direction: SourceDirection, interpolated: Bool) { fill(slot, nearestKey: 0) }

    func nearestKey(for direction: SourceDirection, hint: Int) -> Int { 0 }

    func fill(_ slot: HRIRSlot, nearestKey key: Int) {
        slot.setFilters(
            left: left, right: right, count: 8, leftDelay: leftDelaySeconds * sampleRate, rightDelay: 0)
    }
}
