import Foundation
@testable import KVOEngine
import KVOValues

/// Whether a ``JSONValue`` and what JSONSerialization read have the same
/// structure and content (numbers by value, strings by scalars, byte order
/// marks aside: JSONSerialization drops them).
enum ObjCAgreement {
    static func agrees(_ value: JSONValue, _ other: Any) -> Bool {
        // Foundation's booleans are NSNumbers whose Objective-C type is `c` (char).
        func isBoolean(_ number: NSNumber) -> Bool { String(cString: number.objCType) == "c" }
        switch value {
        case .null:
            return other is NSNull
        case .bool(let flag):
            guard let number = other as? NSNumber, isBoolean(number) else { return false }
            return number.boolValue == flag
        case .number(let number):
            guard let theirs = other as? NSNumber, !isBoolean(theirs), let ours = Double(number.literal) else { return false }
            if ours == theirs.doubleValue { return true }
            return theirs is NSDecimalNumber && abs(ours - theirs.doubleValue) <= abs(ours) * 1e-14
        case .string(let string):
            guard let theirs = other as? String else { return false }
            return withoutByteOrderMarks(string).unicodeScalars.elementsEqual(withoutByteOrderMarks(theirs).unicodeScalars)
        case .array(let elements):
            guard let theirs = other as? [Any], theirs.count == elements.count else { return false }
            return zip(elements, theirs).allSatisfy { agrees($0, $1) }
        case .object(let members):
            guard let theirs = other as? [String: Any], theirs.count == members.count else { return false }
            return members.allSatisfy { name, member in theirs[name].map { agrees(member, $0) } ?? false }
        }
    }

    private static func withoutByteOrderMarks(_ string: String) -> String {
        var scalars = string.unicodeScalars
        scalars.removeAll { $0 == "\u{FEFF}" }
        return String(scalars)
    }
}
