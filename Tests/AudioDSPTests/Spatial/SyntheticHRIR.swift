// Tests. A small synthetic HRIR set for exercising `HRTFConvolver` without a SOFA file: filters that
// depend on the direction in steps of 10° (so nearest-neighbour switching happens), mirror-symmetric by
// construction, with spherical-head delays.
import AudioDSP
import Foundation

enum SyntheticHRIR {
    static let length = 48

    /// The filter of the ear whose angle of incidence has cosine `c`, quantised to 10° of azimuth.
    static func filter(cosIncidence c: Double) -> [Float] {
        let angle = (acos(max(-1, min(1, c))) * 18 / Double.pi).rounded() * 10  // degrees, 10° grid
        let brightness = 0.3 + 0.6 * (1 - angle / 180)
        return (0..<length).map { k in
            Float(brightness * pow(0.78, Double(k)) * cos(Double(k) * (0.4 + angle / 200)))
        }
    }

    /// Fills `slot` for `direction`: left ear from −x, right ear from +x; delays from the spherical head.
    static func fill(_ slot: HRIRSlot, direction: SourceDirection, sampleRate: Double) {
        let x = direction.local.x
        let model = SphericalHeadModel()
        let quantised = (asin(max(-1, min(1, x))) * 18 / Double.pi).rounded() * Double.pi / 18
        let q = sin(quantised)
        let left = filter(cosIncidence: -q)
        let right = filter(cosIncidence: q)
        left.withUnsafeBufferPointer { l in
            right.withUnsafeBufferPointer { r in
                slot.setFilters(
                    left: l.baseAddress!, right: r.baseAddress!, count: length,
                    leftDelay: model.earDelay(cosIncidence: -q) * sampleRate,
                    rightDelay: model.earDelay(cosIncidence: q) * sampleRate)
            }
        }
    }
}
