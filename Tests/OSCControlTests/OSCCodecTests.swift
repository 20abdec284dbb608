// The OSC codec against golden bytes (OSC 1.0 spec examples), round trips and malformed packets.
@testable import OSCControl
import Testing

@Suite struct OSCCodecTests {
    /// The OSC 1.0 specification's example: "/oscillator/4/frequency" ,f 440.0.
    @Test func messageMatchesSpecificationBytes() throws {
        let message = OSCMessage("/oscillator/4/frequency", [.float(440)])
        let expected: [UInt8] = [
            0x2f, 0x6f, 0x73, 0x63, 0x69, 0x6c, 0x6c, 0x61, 0x74, 0x6f, 0x72, 0x2f, 0x34, 0x2f, 0x66, 0x72,
            0x65, 0x71, 0x75, 0x65, 0x6e, 0x63, 0x79, 0x00, 0x2c, 0x66, 0x00, 0x00, 0x43, 0xdc, 0x00, 0x00
        ]
        #expect(OSCPacket.message(message).encoded() == expected)
        #expect(try OSCPacket.decode(expected) == .message(message))
        #expect(OSCPacket.encodedSize(of: message) == expected.count)
    }

    /// The specification's second example: "/foo" ,iisff 1000 -1 "hello" 1.234 5.678.
    @Test func mixedArgumentsMatchSpecificationBytes() throws {
        let message = OSCMessage("/foo", [.int32(1000), .int32(-1), .string("hello"), .float(1.234), .float(5.678)])
        let expected: [UInt8] = [
            0x2f, 0x66, 0x6f, 0x6f, 0x00, 0x00, 0x00, 0x00, 0x2c, 0x69, 0x69, 0x73, 0x66, 0x66, 0x00, 0x00,
            0x00, 0x00, 0x03, 0xe8, 0xff, 0xff, 0xff, 0xff, 0x68, 0x65, 0x6c, 0x6c, 0x6f, 0x00, 0x00, 0x00,
            0x3f, 0x9d, 0xf3, 0xb6, 0x40, 0xb5, 0xb2, 0x2d
        ]
        #expect(OSCPacket.message(message).encoded() == expected)
        #expect(try OSCPacket.decode(expected) == .message(message))
    }

    @Test func everyTypeRoundTrips() throws {
        let message = OSCMessage(
            "/all",
            [
                .int32(-7), .int64(1 << 40), .float(0.5), .double(-2.25), .string("ünï"), .symbol("sym"),
                .blob([1, 2, 3, 4, 5]), .timetag(OSCTimetag(seconds: 3_900_000_000, fraction: 12345)), .char(65),
                .midi(0x90, 60, 100, 0), .bool(true), .bool(false), .null, .infinitum
            ])
        let bundle = OSCPacket.bundle(
            .immediate,
            [
                .message(message),
                .bundle(
                    OSCTimetag(seconds: 5, fraction: 6),
                    [
                        .message(OSCMessage("/inner", []))
                    ])
            ])
        let bytes = bundle.encoded()
        #expect(bytes.count % 4 == 0)
        #expect(try OSCPacket.decode(bytes) == bundle)
        #expect(bundle.messages.map(\.timetag) == [.immediate, OSCTimetag(seconds: 5, fraction: 6)])
    }

    static let malformed: [(String, [UInt8])] = [
        ("empty", [UInt8]()),
        ("unaligned", Array("/a\0\0,\0\0\0x".utf8)),
        ("no terminator", Array("/abc".utf8)),
        ("no type tags", Array("/abc\0\0\0\0".utf8)),
        ("type tags without comma", Array("/abc\0\0\0\0i\0\0\0\0\0\0\0".utf8)),
        ("unknown type", Array("/a\0\0,q\0\0".utf8)),
        ("argument missing", Array("/a\0\0,i\0\0".utf8)),
        ("blob too long", Array("/a\0\0,b\0\0".utf8) + [0, 0, 0, 9, 1, 2, 3, 4]),
        ("address without slash", Array("ab\0\0,\0\0\0".utf8)),
        ("bundle element too large", Array("#bundle\0".utf8) + [0, 0, 0, 0, 0, 0, 0, 1] + [0, 0, 0, 64]),
        ("garbage padding", Array("/a\0x,\0\0\0".utf8))
    ]

    @Test(arguments: malformed)
    func malformedPacketsAreRefused(name: String, bytes: [UInt8]) {
        #expect(throws: OSCDecodeError.self, "\(name)") { try OSCPacket.decode(bytes) }
    }

    @Test func deeplyNestedBundlesAreRefused() {
        var packet = OSCPacket.message(OSCMessage("/x"))
        for _ in 0..<12 { packet = .bundle(.immediate, [packet]) }
        #expect(throws: OSCDecodeError.self) { try OSCPacket.decode(packet.encoded()) }
    }

    @Test func timetagConvertsUnixTime() {
        let tag = OSCTimetag(unixSeconds: 1_700_000_000.5)
        #expect(tag.seconds == UInt32(1_700_000_000 + 2_208_988_800))
        #expect(tag.fraction == 1 << 31)
        #expect(abs(tag.unixSeconds - 1_700_000_000.5) < 1e-9)
        #expect(abs(tag.adding(seconds: 0.25).seconds(since: tag) - 0.25) < 1e-9)
        #expect(OSCTimetag.immediate.isImmediate)
    }
}
