// Tests. A diagnostic, not a check: with SOUNDSTAGE_HRTF_ITD_DIAGNOSTIC=1 it prints, for every direction
// whose broadband ITD is off by more than half a frame, the interaural cross-correlation of the dataset
// and of the render around their peaks (the largest local maxima, relative to the largest).
import AudioDSP
import Foundation
@testable import SpatialAssets
import Testing

@Suite(.serialized) struct HRTFITDDiagnostic {
    static let enabled = ProcessInfo.processInfo.environment["SOUNDSTAGE_HRTF_ITD_DIAGNOSTIC"] == "1"

    /// The `count` largest local maxima of `c` (index lag + range) as (lag, value / largest).
    static func peaks(_ c: [Double], count: Int = 3) -> String {
        let range = (c.count - 1) / 2
        let top = c.max() ?? 1
        var maxima: [(Int, Double)] = []
        for i in 1..<(c.count - 1) where c[i] >= c[i - 1] && c[i] >= c[i + 1] { maxima.append((i - range, c[i] / top)) }
        return maxima.sorted { $0.1 > $1.1 }.prefix(count).map { String(format: "%d:%.3f", $0.0, $0.1) }
            .joined(separator: " ")
    }

    @Test(.enabled(if: enabled), arguments: [HRTFQuality.standard, .high])
    func printFailingDirections(quality: HRTFQuality) throws {
        let rate = 48_000.0
        let clock = ContinuousClock()
        let started = clock.now
        let set = try SOFADataset(path: kemarPath, sampleRate: rate, options: .init(quality: quality, sampleRate: rate))
        print("ITD \(quality == .standard ? "HRTF" : "HQ") set loaded in \(clock.now - started)")
        let raw = try RawDataset(path: kemarPath, rate: rate)
        let meter = FidelityMeter(rate: rate)
        let frames = 2048
        var click = [Float](repeating: 0, count: frames)
        click[0] = 1
        for i in 0..<raw.count {
            let direction = SourceDirection(
                azimuth: -raw.azimuths[i] * Double.pi / 180, elevation: raw.elevations[i] * Double.pi / 180)
            var k = set.makeConvolver(maxBlockFrames: frames, quality: quality)
            defer { k.deallocate() }
            publish(set, k.exchange, direction, interpolated: quality.interpolates)
            let out = renderHRTF(&k, click, block: frames)
            let (yl, yr) = (meter.spectrum(out[0]), meter.spectrum(out[1]))
            let (rl, rr) = (meter.spectrum(raw.left[i]), meter.spectrum(raw.right[i]))
            let ref = meter.itdAndCorrelation(rl, rr, lowpass: false)
            let got = meter.itdAndCorrelation(yl, yr, lowpass: false)
            let refLow = meter.itd(rl, rr, lowpass: true)
            let gotLow = meter.itd(yl, yr, lowpass: true)
            guard abs(ref.lag - got.lag) > 0.5 else { continue }
            print(
                String(
                    format: "ITD %@ %.0f°/%.0f°: dataset %.2f (low %.2f) [%@]; render %.2f (low %.2f) [%@]",
                    quality == .standard ? "HRTF" : "HQ", raw.azimuths[i], raw.elevations[i], ref.lag, refLow,
                    Self.peaks(ref.correlation), got.lag, gotLow, Self.peaks(got.correlation)))
        }
    }
}
