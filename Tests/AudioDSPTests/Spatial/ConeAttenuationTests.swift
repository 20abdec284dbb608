// Tests. OpenAL sound cones: full gain inside, outer gain outside, linear in angle between.
import AudioDSP
import Testing

@Suite struct ConeAttenuationTests {
    let cone = ConeAttenuation(innerAngleDegrees: 60, outerAngleDegrees: 180, outerGain: 0.2)

    @Test func insideBetweenAndOutside() {
        #expect(cone.gain(angleDegrees: 0) == 1)
        #expect(cone.gain(angleDegrees: 30) == 1)  // the inner cone's edge (half of 60°)
        #expect(abs(cone.gain(angleDegrees: 60) - (1 + (0.2 - 1) * 0.5)) < 1e-15)  // halfway 30° → 90°
        #expect(abs(cone.gain(angleDegrees: 45) - (1 - 0.8 * 0.25)) < 1e-15)
        #expect(cone.gain(angleDegrees: 90) == 0.2)
        #expect(cone.gain(angleDegrees: 170) == 0.2)
    }

    @Test func positionsAndDirectionGiveTheAngle() {
        let source = SpatialVector(0, 0, -5)
        // Facing the listener at the origin: inside.
        #expect(cone.gain(source: source, direction: SpatialVector(0, 0, 2), listener: .zero) == 1)
        // Facing away: outside.
        #expect(cone.gain(source: source, direction: SpatialVector(0, 0, -1), listener: .zero) == 0.2)
        // Facing sideways (90° off the listener): the outer edge.
        #expect(abs(cone.gain(source: source, direction: SpatialVector(1, 0, 0), listener: .zero) - 0.2) < 1e-12)
        // 60° off: halfway between the edges.
        let sixty = SpatialVector(0.866_025_403_784_438_6, 0, 0.5)
        #expect(abs(cone.gain(source: source, direction: sixty, listener: .zero) - 0.6) < 1e-9)
    }

    @Test func defaultsAndZeroDirectionAreOmnidirectional() {
        let omni = ConeAttenuation()
        for angle in stride(from: 0.0, through: 180, by: 10) { #expect(omni.gain(angleDegrees: angle) == 1) }
        #expect(cone.gain(source: SpatialVector(0, 0, -5), direction: .zero, listener: .zero) == 1)
    }
}
