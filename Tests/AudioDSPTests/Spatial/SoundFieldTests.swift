// Tests. First-order Ambisonics: ACN/SN3D encoding coefficients, decoder power on regular and
// irregular layouts and stereo, and exact mirror symmetry through encode + decode.
import AudioDSP
import Foundation
import Testing

@Suite struct SoundFieldTests {
    @Test func encodingIsACNOrderWithSN3DNormalisation() {
        func c(_ az: Double, _ el: Double) -> (Float, Float, Float, Float) {
            let e = AmbisonicEncoder.coefficients(
                for: SourceDirection(azimuth: az * Double.pi / 180, elevation: el * Double.pi / 180))
            return (e.w, e.y, e.z, e.x)
        }
        #expect(c(0, 0) == (1, 0, 0, 1))  // ahead: W, X
        let left = c(-90, 0)  // left is +Y in Ambisonic axes
        #expect(left.0 == 1 && abs(left.1 - 1) < 1e-7 && abs(left.3) < 1e-7)
        let up = c(0, 90)
        #expect(abs(up.2 - 1) < 1e-7 && abs(up.3) < 1e-7)
        // SN3D first order: the directional components have unit peak, so |(Y, Z, X)| = W = 1.
        for d in sampledDirections {
            let e = AmbisonicEncoder.coefficients(for: d)
            #expect(abs(Double(e.x * e.x + e.y * e.y + e.z * e.z) - 1) < 1e-6)
            // Y = sin φ_left cos θ with φ_left = −azimuth.
            #expect(abs(Double(e.y) - sin(-d.azimuth) * cos(d.elevation)) < 1e-6)
        }
    }

    /// Gains per output channel of encode + decode for a direction.
    static func gains(_ layout: SpeakerLayout, _ d: SourceDirection, _ weighting: AmbisonicDecoderWeighting = .maxRE)
        -> [Double]
    {
        let rows = AmbisonicDecoder.matrixRows(layout: layout, weighting: weighting)
        let e = AmbisonicEncoder.coefficients(for: d)
        var g = [Double](repeating: 0, count: layout.channelCount)
        for (i, s) in layout.speakers.enumerated() {
            g[s.channel] =
                rows[i][0] * Double(e.w) + rows[i][1] * Double(e.y) + rows[i][2] * Double(e.z) + rows[i][3]
                * Double(e.x)
        }
        return g
    }

    static func power(_ g: [Double]) -> Double { g.reduce(0) { $0 + $1 * $1 } }

    @Test(arguments: [AmbisonicDecoderWeighting.basic, .maxRE, .inPhase])
    func regularLayoutsGetUnitPowerFromEveryHorizontalDirection(weighting: AmbisonicDecoderWeighting) {
        for layout in [SpeakerLayout.quad, .octagon] {
            for step in 0..<72 {
                let d = SourceDirection(azimuth: Double(step) * 5 * Double.pi / 180, elevation: 0)
                #expect(abs(Self.power(Self.gains(layout, d, weighting)) - 1) < 1e-6)
            }
        }
        // In-phase never feeds a speaker with inverted polarity.
        for d in sampledDirections { #expect(Self.gains(.octagon, d, .inPhase).allSatisfy { $0 >= -1e-12 }) }
    }

    @Test func theLoudestSpeakerIsTheOneNearestTheSource() {
        for layout in [SpeakerLayout.quad, .octagon, .surround51] {
            for s in layout.speakers {
                let g = Self.gains(layout, SourceDirection(azimuth: s.azimuthDegrees * Double.pi / 180, elevation: 0))
                #expect(g.indices.max { g[$0] < g[$1] } == s.channel)
            }
        }
    }

    /// Stereo: virtual cardioids at ±90°, unit power ahead, +3 dB at the sides, nothing on the far side.
    @Test func stereoIsAPairOfVirtualCardioids() {
        let ahead = Self.gains(.stereo, SourceDirection())
        #expect(ahead[0] == ahead[1] && abs(Self.power(ahead) - 1) < 1e-6)
        let right = Self.gains(.stereo, SourceDirection(azimuth: Double.pi / 2, elevation: 0))
        #expect(abs(right[0]) < 1e-7 && abs(right[1] - 2.0.squareRoot()) < 1e-6)
    }

    /// Irregular rigs: the projection decoder's power varies with direction; 5.1 stays within
    /// the documented −3.5 … +2.5 dB (7.1: −1.5 … +1.5 dB).
    @Test func irregularLayoutsStayWithinTheDocumentedPowerRange() {
        for layout in [SpeakerLayout.surround51, .surround71] {
            var low = Double.infinity
            var high = -Double.infinity
            for step in 0..<360 {
                let p = Self.power(
                    Self.gains(layout, SourceDirection(azimuth: Double(step) * Double.pi / 180, elevation: 0)))
                low = min(low, p)
                high = max(high, p)
            }
            #expect(
                10 * log10(low) > -3.5 && 10 * log10(high) < 2.5,
                "\(layout.channelCount) channels: \(10 * log10(low)) … \(10 * log10(high)) dB")
        }
    }

    @Test(arguments: SpeakerLayout.presets.map(\.name))
    func mirroringSwapsMirroredSpeakersExactlyThroughEncodeAndDecode(name: String) {
        let layout = SpeakerLayout.presets.first { $0.name == name }!.layout
        let x = spatialNoise(frames: 1500, seed: 21)
        var mirror = [Int](repeating: -1, count: layout.channelCount)
        for s in layout.speakers {
            mirror[s.channel] =
                layout.speakers.first {
                    $0.azimuthDegrees == -s.azimuthDegrees
                        || abs($0.azimuthDegrees) == 180 && abs(s.azimuthDegrees) == 180
                }!.channel
        }
        let decoder = AmbisonicDecoder(layout: layout)
        defer { decoder.deallocate() }
        func render(_ d: SourceDirection) -> [[Float]] {
            var encoder = AmbisonicEncoder()
            encoder.setDirection(d, gain: 0.9, rampFrames: 0)
            let bformat = renderSource(x, channelCount: 4) { i, bus, n in
                encoder.process(input: i, bformat: bus, frames: n)
            }
            let flat = bformat.flatMap { $0 }
            return renderSource(x, channelCount: layout.channelCount, block: x.count) { _, bus, n in
                var copy = flat
                copy.withUnsafeMutableBufferPointer {
                    decoder.process(
                        bformat: BusRef(data: $0.baseAddress!, channelCount: 4, stride: x.count), output: bus, frames: n
                    )
                }
            }
        }
        for d in sampledDirections.prefix(48) {
            let a = render(d)
            let b = render(d.mirrored)
            for s in layout.speakers { #expect(a[s.channel] == b[mirror[s.channel]], "\(name) at \(d.azimuth)") }
        }
    }
}
