// Tests. OpenAL 1.1 distance models at sampled points and at their limits, and AVAudioEnvironmentNode's
// three models mapped onto the clamped ones.
import AudioDSP
import Foundation
import Testing

@Suite struct DistanceAttenuationTests {
    static let distances: [Double] = [0, 0.25, 0.5, 1, 1.5, 2, 3.7, 10, 25, 49.9, 50, 80, 1000]

    /// The spec's formulas written out independently (ref 2, max 50, rolloff 1.5 unless given).
    static func reference(_ model: DistanceModel, _ d: Double, ref: Double, max maxD: Double, r: Double) -> Double {
        var d = d
        if model.isClamped { d = Swift.max(ref, Swift.min(d, maxD)) }
        switch model {
        case .none: return 1
        case .inverse, .inverseClamped: return ref / (ref + r * (d - ref))
        case .linear, .linearClamped: return 1 - r * (Swift.min(d, maxD) - ref) / (maxD - ref)
        case .exponent, .exponentClamped: return pow(d / ref, -r)
        }
    }

    @Test(arguments: DistanceModel.allCases)
    func gainMatchesTheFormulaAtSampledDistances(model: DistanceModel) {
        let a = DistanceAttenuation(model: model, referenceDistance: 2, maximumDistance: 50, rolloffFactor: 0.8)
        for d in Self.distances where !(d == 0 && (model == .exponent || model == .inverse)) {
            let expected = Self.reference(model, d, ref: 2, max: 50, r: 0.8)
            #expect(abs(a.gain(distance: d) - expected) <= 1e-12 * max(1, expected), "\(model) at \(d) m")
        }
    }

    @Test(arguments: DistanceModel.allCases)
    func gainIsOneAtTheReferenceAndNonIncreasingBeyond(model: DistanceModel) {
        let a = DistanceAttenuation(model: model, referenceDistance: 2, maximumDistance: 50, rolloffFactor: 0.8)
        #expect(abs(a.gain(distance: 2) - 1) < 1e-15)
        var previous = 1.0
        for i in 0...1000 {
            let g = a.gain(distance: 2 + Double(i) * 0.1)
            #expect(g <= previous + 1e-15)
            previous = g
        }
    }

    @Test func clampedModelsHoldBelowTheReferenceAndBeyondTheMaximum() {
        for model in [DistanceModel.inverseClamped, .linearClamped, .exponentClamped] {
            let a = DistanceAttenuation(model: model, referenceDistance: 2, maximumDistance: 50, rolloffFactor: 0.8)
            #expect(a.gain(distance: 0.5) == 1, "\(model) inside the reference distance")
            #expect(a.gain(distance: 0) == 1)
            #expect(a.gain(distance: 500) == a.gain(distance: 50), "\(model) beyond max")
        }
        // Unclamped inverse and exponent amplify inside the reference distance and keep falling beyond max.
        let inverse = DistanceAttenuation(
            model: .inverse, referenceDistance: 2, maximumDistance: 50, rolloffFactor: 0.8)
        #expect(inverse.gain(distance: 1) > 1)
        #expect(inverse.gain(distance: 500) < inverse.gain(distance: 50))
        let exponent = DistanceAttenuation(
            model: .exponent, referenceDistance: 2, maximumDistance: 50, rolloffFactor: 0.8)
        #expect(abs(exponent.gain(distance: 1) - pow(0.5, -0.8)) < 1e-12)
        // Unclamped linear still stops at max (OpenAL: "avoid negative gain") and is floored at 0.
        let linear = DistanceAttenuation(model: .linear, referenceDistance: 2, maximumDistance: 50, rolloffFactor: 0.8)
        #expect(abs(linear.gain(distance: 500) - 0.2) < 1e-12)
        let steep = DistanceAttenuation(model: .linear, referenceDistance: 2, maximumDistance: 50, rolloffFactor: 3)
        #expect(steep.gain(distance: 40) == 0)
    }

    @Test(arguments: DistanceModel.allCases)
    func rolloffZeroMeansNoAttenuation(model: DistanceModel) {
        let a = DistanceAttenuation(model: model, referenceDistance: 2, maximumDistance: 50, rolloffFactor: 0)
        for d in Self.distances { #expect(a.gain(distance: d) == 1, "\(model) at \(d)") }
    }

    /// "If the formula can not be evaluated then the source will not be attenuated."
    @Test func formulasThatCannotBeEvaluatedGiveUnity() {
        #expect(DistanceAttenuation(model: .linear, referenceDistance: 5, maximumDistance: 5).gain(distance: 9) == 1)
        #expect(
            DistanceAttenuation(model: .linearClamped, referenceDistance: 5, maximumDistance: 5).gain(distance: 9) == 1)
        #expect(DistanceAttenuation(model: .inverse, referenceDistance: 0).gain(distance: 9) == 1)
        #expect(DistanceAttenuation(model: .exponent, referenceDistance: 0).gain(distance: 9) == 1)
        #expect(DistanceAttenuation(model: .exponent, referenceDistance: 1).gain(distance: 0) == 1)
        // Inverse with rolloff > 1 reaches its pole inside the reference distance.
        #expect(DistanceAttenuation(model: .inverse, referenceDistance: 2, rolloffFactor: 2).gain(distance: 1) == 1)
        #expect(DistanceAttenuation(model: .inverse).gain(distance: .nan) == 1)
        #expect(DistanceAttenuation(model: .none).gain(distance: 1e6) == 1)
    }

    @Test func environmentModelsAreTheClampedOpenALModels() {
        #expect(EnvironmentDistanceModel.exponential.rawValue == 1)
        #expect(EnvironmentDistanceModel.inverse.rawValue == 2)
        #expect(EnvironmentDistanceModel.linear.rawValue == 3)
        #expect(EnvironmentDistanceModel.exponential.distanceModel == .exponentClamped)
        #expect(EnvironmentDistanceModel.inverse.distanceModel == .inverseClamped)
        #expect(EnvironmentDistanceModel.linear.distanceModel == .linearClamped)
        let d = DistanceAttenuation.environmentDefault
        #expect(
            d.model == .inverseClamped && d.referenceDistance == 1 && d.maximumDistance == 100_000
                && d.rolloffFactor == 1)
        #expect(abs(d.gain(distance: 4) - 0.25) < 1e-15)
        #expect(DistanceModel.inverseClamped.rawValue == 0xD002 && DistanceModel.none.rawValue == 0)
    }
}
