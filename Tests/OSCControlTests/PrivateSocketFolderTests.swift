// The HTTP server's private socket folder: named for its process, and removed by the next engine when
// that process was killed before it could remove it.
import Foundation
@testable import OSCControl
import Testing

@Suite struct PrivateSocketFolderTests {
    private func scratch() throws -> String {
        let path = NSTemporaryDirectory() + "socketfolder-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    /// A process that has ended (reaped): its id names nothing.
    private func endedProcessID() throws -> pid_t {
        let child = Process()
        child.executableURL = URL(fileURLWithPath: "/bin/true")
        try child.run()
        child.waitUntilExit()
        return child.processIdentifier
    }

    /// Makes a folder as a killed engine leaves it: its socket still bound, nobody listening.
    private func abandonedFolder(in directory: String, pid: pid_t) throws -> String {
        let path = directory + "/soundstage-http-\(pid)-Ab3xYz"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let socketPath = path + "/http.sock"
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (i, byte) in socketPath.utf8.enumerated() { raw[i] = byte }
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        #expect(bound == 0)
        return path
    }

    @Test func aKilledEnginesFolderIsRemovedByTheNextOne() throws {
        let directory = try scratch()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let abandoned = try abandonedFolder(in: directory, pid: try endedProcessID())
        // A live process's folder, a folder with something else in it, and foreign names stay.
        let live = try abandonedFolder(in: directory, pid: getppid())
        let crowded = try abandonedFolder(in: directory, pid: try endedProcessID())
        _ = FileManager.default.createFile(atPath: crowded + "/notes.txt", contents: Data("keep".utf8))
        for name in ["soundstage-http-Q1w2E3", "soundstage-http-12-34", "soundstage-jackd-x-1.log"] {
            try FileManager.default.createDirectory(atPath: directory + "/" + name, withIntermediateDirectories: false)
        }

        let made = try #require(PrivateSocketFolder.make(in: directory))
        #expect(made.hasPrefix(directory + "/soundstage-http-\(getpid())-"))
        #expect(PrivateSocketFolder.owner(ofFolderNamed: (made as NSString).lastPathComponent) == getpid())
        var info = stat()
        #expect(stat(made, &info) == 0 && info.st_mode & 0o777 == 0o700)

        let left = Set(try FileManager.default.contentsOfDirectory(atPath: directory))
        #expect(!left.contains((abandoned as NSString).lastPathComponent), "\(left)")
        #expect(left.contains((live as NSString).lastPathComponent))
        #expect(left.contains((crowded as NSString).lastPathComponent))
        #expect(left.isSuperset(of: ["soundstage-http-Q1w2E3", "soundstage-http-12-34", "soundstage-jackd-x-1.log"]))
    }
}
