// NSMClient's parsing of the manager's messages (NSM API 1.1.2), without sockets.
@testable import OSCControl
import Testing

@Suite struct NSMClientTests {
    @Test func theManagersMessagesBecomeEvents() {
        #expect(
            NSMClient.parse("/nsm/client/open", [.string("/s/a.nX"), .string("Song"), .string("a.nX")])
                == .open(path: "/s/a.nX", displayName: "Song", clientID: "a.nX"))
        #expect(NSMClient.parse("/nsm/client/save", []) == .save)
        #expect(NSMClient.parse("/nsm/client/session_is_loaded", []) == .sessionIsLoaded)
        #expect(
            NSMClient.parse(
                "/reply", [.string("/nsm/server/announce"), .string("hi"), .string("nsmd"), .string(":broadcast:")])
                == .announced(welcome: "hi", manager: "nsmd", capabilities: ":broadcast:"))
        #expect(
            NSMClient.parse("/error", [.string("/nsm/server/announce"), .int32(-2), .string("too new")])
                == .announceRefused(code: -2, message: "too new"))
    }

    @Test func malformedOrUnservedClientMessagesGetGeneralErrorsAndOthersNone() {
        func answer(_ event: NSMEvent) -> NSMErrorCode?? {
            if case .refused(_, let code, _) = event { return .some(code) }
            return nil
        }
        #expect(answer(NSMClient.parse("/nsm/client/open", [.string("/x"), .int32(1)])) == .some(.general))
        #expect(answer(NSMClient.parse("/nsm/client/save", [.int32(1)])) == .some(.general))
        #expect(answer(NSMClient.parse("/nsm/client/show_optional_gui", [])) == .some(.general))
        // A relayed broadcast, or a reply about something we never sent: no answer.
        #expect(answer(NSMClient.parse("/tempomap/update", [.string("0,120")])) == .some(nil))
        #expect(answer(NSMClient.parse("/reply", [.string("/nsm/server/list"), .string("")])) == .some(nil))
    }

    @Test func errorCodesAreTheAPIs() {
        #expect(NSMErrorCode.allCases.map(\.rawValue) == Array((-10)...(-1)).reversed())
        #expect(NSMErrorCode.noSessionOpen.symbol == "ERR_NO_SESSION_OPEN" && NSMErrorCode.noSessionOpen.rawValue == -6)
        #expect(NSMClient.capabilities == ":switch:dirty:message:")
    }

    @Test func anUnusableURLIsAClearError() {
        #expect(throws: NSMClientError.self) { try NSMClient(url: "garbage") }
        #expect(throws: NSMClientError.self) { try NSMClient(url: "osc.udp://no-such-host.invalid:1234/") }
    }
}
