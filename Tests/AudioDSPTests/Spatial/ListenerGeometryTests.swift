// Tests. Listener orientation (vectors ↔ yaw/pitch/roll) and listener-relative source directions in
// OpenAL's coordinates.
import AudioDSP
import Foundation
import Testing

@Suite struct ListenerGeometryTests {
    static func close(_ a: SpatialVector, _ b: SpatialVector, _ tolerance: Double = 1e-12) -> Bool {
        abs(a.x - b.x) <= tolerance && abs(a.y - b.y) <= tolerance && abs(a.z - b.z) <= tolerance
    }

    @Test func defaultIsOpenALsFrame() {
        let o = ListenerOrientation()
        #expect(o.forward == SpatialVector(0, 0, -1))
        #expect(o.up == SpatialVector(0, 1, 0))
        #expect(o.right == SpatialVector(1, 0, 0))
        #expect((o.yawDegrees, o.pitchDegrees, o.rollDegrees) == (0, 0, 0))
    }

    /// Positive yaw turns right, positive pitch looks up, positive roll tilts the head's top right.
    @Test func angleSignsFollowTheDocumentedConvention() {
        #expect(
            Self.close(
                ListenerOrientation(yawDegrees: 90, pitchDegrees: 0, rollDegrees: 0).forward, SpatialVector(1, 0, 0)))
        #expect(
            Self.close(
                ListenerOrientation(yawDegrees: 0, pitchDegrees: 90, rollDegrees: 0).forward, SpatialVector(0, 1, 0)))
        #expect(
            Self.close(ListenerOrientation(yawDegrees: 0, pitchDegrees: 0, rollDegrees: 90).up, SpatialVector(1, 0, 0)))
        #expect(
            Self.close(
                ListenerOrientation(yawDegrees: 180, pitchDegrees: 0, rollDegrees: 0).right, SpatialVector(-1, 0, 0)))
    }

    @Test(arguments: [
        (0.0, 0.0, 0.0), (30, 0, 0), (-135, 20, 0), (75, -40, 15), (170, 60, -120), (-10, 89, 30), (45, -5, 179)
    ])
    func anglesSurviveTheRoundTripThroughVectors(yaw: Double, pitch: Double, roll: Double) throws {
        let fromAngles = ListenerOrientation(yawDegrees: yaw, pitchDegrees: pitch, rollDegrees: roll)
        // Orthonormal, right-handed frame.
        #expect(abs(fromAngles.forward.length - 1) < 1e-12 && abs(fromAngles.up.length - 1) < 1e-12)
        #expect(abs(fromAngles.forward.dot(fromAngles.up)) < 1e-12)
        let fromVectors = try #require(ListenerOrientation(forward: fromAngles.forward, up: fromAngles.up))
        #expect(abs(fromVectors.yawDegrees - yaw) < 1e-9, "yaw")
        #expect(abs(fromVectors.pitchDegrees - pitch) < 1e-9, "pitch")
        #expect(abs(fromVectors.rollDegrees - roll) < 1e-9, "roll")
        #expect(Self.close(fromVectors.forward, fromAngles.forward) && Self.close(fromVectors.up, fromAngles.up))
    }

    /// At pitch ±90° yaw and roll describe the same turn; the vector form is kept and the angles
    /// reproduce it with roll 0.
    @Test(arguments: [90.0, -90.0])
    func gimbalLockPutsTheTurnInYaw(pitch: Double) throws {
        let a = ListenerOrientation(yawDegrees: 30, pitchDegrees: pitch, rollDegrees: 20)
        let b = try #require(ListenerOrientation(forward: a.forward, up: a.up))
        #expect(b.rollDegrees == 0)
        let rebuilt = ListenerOrientation(yawDegrees: b.yawDegrees, pitchDegrees: b.pitchDegrees, rollDegrees: 0)
        #expect(Self.close(rebuilt.forward, a.forward, 1e-9) && Self.close(rebuilt.up, a.up, 1e-9))
    }

    @Test func vectorsAreNormalisedAndMadePerpendicular() throws {
        let o = try #require(ListenerOrientation(forward: SpatialVector(0, 0, -5), up: SpatialVector(0, 3, 2)))
        #expect(o.forward == SpatialVector(0, 0, -1))
        #expect(Self.close(o.up, SpatialVector(0, 1, 0)))
        #expect(ListenerOrientation(forward: .zero, up: SpatialVector(0, 1, 0)) == nil)
        #expect(ListenerOrientation(forward: SpatialVector(0, 2, 0), up: SpatialVector(0, 1, 0)) == nil)
        var kept = ListenerOrientation(yawDegrees: 10, pitchDegrees: 0, rollDegrees: 0)
        let accepted = kept.setVectors(forward: SpatialVector(1, 0, 0), up: SpatialVector(-3, 0, 0))
        #expect(!accepted)
        #expect(kept.yawDegrees == 10)
    }

    @Test func sourceDirectionIsListenerRelative() {
        let o = ListenerOrientation()
        let origin = SpatialVector.zero
        let right = SourceDirection(source: SpatialVector(3, 0, 0), listener: origin, orientation: o)
        #expect(abs(right.azimuth - Double.pi / 2) < 1e-15 && right.elevation == 0 && right.distance == 3)
        let ahead = SourceDirection(source: SpatialVector(0, 0, -2), listener: origin, orientation: o)
        #expect(ahead.azimuth == 0 && ahead.distance == 2)
        let behind = SourceDirection(source: SpatialVector(0, 0, 1), listener: origin, orientation: o)
        #expect(abs(behind.azimuth.magnitude - Double.pi) < 1e-15)
        let above = SourceDirection(source: SpatialVector(0, 5, 0), listener: origin, orientation: o)
        #expect(abs(above.elevation - Double.pi / 2) < 1e-15)
        // A listener at (10, 0, 0) turned right (yaw 90) hears a source at (10, 0, −4) on its left.
        let turned = ListenerOrientation(yawDegrees: 90, pitchDegrees: 0, rollDegrees: 0)
        let left = SourceDirection(
            source: SpatialVector(10, 0, -4), listener: SpatialVector(10, 0, 0), orientation: turned)
        #expect(abs(left.azimuth + Double.pi / 2) < 1e-12 && abs(left.distance - 4) < 1e-12)
        // Azimuth/elevation constructor agrees with the vector form.
        let d = SourceDirection(azimuth: 0.7, elevation: -0.2)
        #expect(abs(d.azimuth - 0.7) < 1e-14 && abs(d.elevation + 0.2) < 1e-14)
    }

    @Test func aSourceOnTheListenerIsAheadAndMirroringNegatesXOnly() {
        let d = SourceDirection(source: SpatialVector(1, 2, 3), listener: SpatialVector(1, 2, 3), orientation: .init())
        #expect(d.local == SpatialVector(0, 0, -1) && d.distance == 0)
        let m = SourceDirection(localVector: SpatialVector(0.3, -0.2, 0.5)).mirrored
        let s = SourceDirection(localVector: SpatialVector(-0.3, -0.2, 0.5))
        #expect(m == s)
    }
}
