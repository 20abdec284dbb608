// Meter bundles stay under 4 KB per datagram.
@testable import OSCControl
import Testing

@Suite struct OSCMeterPackingTests {
    @Test func bundlesFitOneDatagram() {
        let messages = (0..<40).map { i in
            OSCMeterPacking.message(
                node: "node-\(i)", peakDecibels: Array(repeating: -6, count: 64),
                rmsDecibels: Array(repeating: -12, count: 64))
        }
        let groups = OSCMeterPacking.bundles(messages)
        #expect(groups.count > 1)
        #expect(groups.flatMap { $0 } == messages)
        for group in groups {
            let bytes = OSCPacket.bundle(.immediate, group.map { .message($0) }).encoded()
            #expect(bytes.count < 4096)
            #expect(bytes.count <= OSCMeterPacking.maximumDatagramBytes)
        }
    }

    @Test func meterMessageLayout() {
        let m = OSCMeterPacking.message(node: "p1", peakDecibels: [-1, -2], rmsDecibels: [-3, -4])
        #expect(m.address == "/meter")
        #expect(m.arguments == [.string("p1"), .int32(2), .float(-1), .float(-2), .float(-3), .float(-4)])
    }
}
