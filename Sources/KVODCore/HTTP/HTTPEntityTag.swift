/// kvod's entity tags: a value's `modSeq` in quotes (`"12"`), strong.
public enum HTTPEntityTag {
    public static func of(modSeq: Int) -> String { "\"\(modSeq)\"" }

    /// The modSeq an `If-Match` names, or nil for anything but one such tag.
    static func modSeq(_ tag: String) -> Int? {
        let trimmed = tag.trimmingSpaces
        guard trimmed.count >= 3, trimmed.hasPrefix("\""), trimmed.hasSuffix("\"") else { return nil }
        guard let modSeq = Int(trimmed.dropFirst().dropLast()), modSeq >= 0 else { return nil }
        return modSeq
    }
}

extension String {
    fileprivate var trimmingSpaces: Substring {
        let start = firstIndex { $0 != " " && $0 != "\t" } ?? endIndex
        let end = lastIndex { $0 != " " && $0 != "\t" }.map(index(after:)) ?? start
        return self[start..<max(start, end)]
    }
}
