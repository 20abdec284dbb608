@testable import AudioDSP
import Testing

/// The delay line's choice between two loudspeakers' delays (`nearerLoudspeakerDelay`), fed the
/// tracker's estimates in turn: what the line takes after each, in milliseconds.
@Suite struct VoiceLoudspeakerDelayTests {
    static let fs = 48_000.0

    func lineDelays(_ estimates: [Double], mode: VoiceProcessingMode = .quality) -> [Double] {
        let kernel = VoiceProcessorKernel(
            settings: VoiceProcessorSettings(mode: mode, referenceChannels: 2, sampleRate: Self.fs))
        return estimates.map { kernel.nearerLoudspeakerDelay($0 * Self.fs / 1000) * 1000 / Self.fs }
    }

    /// Two loudspeakers 7 ms apart: the second is the other loudspeaker at once, and the line keeps
    /// the nearer whichever the tracker hears. A third delay is a moved echo path: the line follows.
    @Test func aCloseSecondDelayIsTheOtherLoudspeakerAtOnce() {
        #expect(lineDelays([30, 37, 30, 37, 49]) == [30, 30, 30, 30, 49])
    }

    /// 50 ms apart (farther than 20 ms): the line follows the second until the first is heard again,
    /// then keeps the nearer.
    @Test func aFartherSecondDelayCountsOnceTheFirstIsHeardAgain() {
        #expect(lineDelays([40, 90, 40, 90, 40]) == [40, 90, 40, 40, 40])
    }

    /// A wrong first estimate (50 ms) and then the two loudspeakers at 100 and 103 ms: the line follows
    /// 100, pairs it with 103, and never goes back to 50.
    @Test func aWrongFirstEstimateIsNotHeld() {
        #expect(lineDelays([50, 100, 103, 100, 103]) == [50, 100, 100, 100, 100])
    }

    /// Beyond 60 ms, or in low-complexity mode beyond 20 ms (its filter is 45 ms long), a second delay
    /// is a moved echo path.
    @Test func aSecondDelayBeyondTheFilterIsAMovedPath() {
        #expect(lineDelays([40, 110, 40]) == [40, 110, 40])
        #expect(lineDelays([40, 70, 40, 70], mode: .lowComplexity) == [40, 70, 40, 70])
    }
}
