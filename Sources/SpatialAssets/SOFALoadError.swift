// Control side. Why a SOFA file could not be turned into an HRIR set.
import Glibc

/// A SOFA (AES69) file could not be loaded, checked or prepared.
public struct SOFALoadError: Error, CustomStringConvertible, Equatable {
    /// The file.
    public var path: String
    /// What went wrong, in words.
    public var reason: String

    public init(path: String, reason: String) {
        self.path = path
        self.reason = reason
    }

    public var description: String { "\(path): \(reason)" }

    /// libmysofa's error codes (mysofa.h) in words.
    static func describe(mysofaError code: Int32) -> String {
        switch code {
        case 0: return "no error"
        case -1: return "libmysofa internal error"
        case 10000: return "not a valid SOFA/HDF5 file (MYSOFA_INVALID_FORMAT)"
        case 10001: return "unsupported SOFA format (MYSOFA_UNSUPPORTED_FORMAT)"
        case 10002: return "out of memory (MYSOFA_NO_MEMORY)"
        case 10003: return "read error (MYSOFA_READ_ERROR)"
        case 10004: return "invalid attributes (MYSOFA_INVALID_ATTRIBUTES)"
        case 10005: return "invalid dimensions (MYSOFA_INVALID_DIMENSIONS)"
        case 10006: return "invalid dimension list (MYSOFA_INVALID_DIMENSION_LIST)"
        case 10007: return "invalid coordinate type (MYSOFA_INVALID_COORDINATE_TYPE)"
        case 10008: return "only emitters with ECI are supported"
        case 10009: return "only delays with IR or MR are supported"
        case 10010: return "only one sampling rate for all measurements is supported"
        case 10011: return "only receivers with RCI are supported"
        case 10012: return "only receivers with cartesian coordinates are supported"
        case 10013: return "invalid receiver positions"
        case 10014: return "only sources with MC are supported"
        // libmysofa passes on the system's error when it cannot open or read the file (2: no such file).
        case 1..<10_000: return String(cString: strerror(code)).lowercased()
        default: return "libmysofa error \(code)"
        }
    }
}
