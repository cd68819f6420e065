//! Where each declaration of a compiled `.proto` file is: the source info of a file, kept as one
//! map from descriptor path to line and column. Shared by the compilation (which moves the
//! source info out of each parse) and the model (which locates findings), so neither needs
//! the other's module.
use std::collections::HashMap;

use prost_reflect::prost_types::SourceCodeInfo;
use prost_reflect::FileDescriptor;

pub(crate) type FastMap<K, V> = HashMap<K, V, foldhash::fast::RandomState>;

/// Source spans (1-based line and column) of the declarations of one file, by descriptor path.
#[derive(Debug, Default)]
pub(crate) struct Spans(FastMap<Vec<i32>, (u32, u32)>);

impl Spans {
    pub(crate) fn of(file: &FileDescriptor) -> Spans {
        let locations = file.file_descriptor_proto().source_code_info.iter();
        Spans::collect(
            locations
                .flat_map(|i| &i.location)
                .map(|l| (l.path.as_slice(), &l.span)),
        )
    }

    /// The spans of a file's source info, taken from it.
    pub(crate) fn from_info(info: Option<SourceCodeInfo>) -> Spans {
        let locations = info.into_iter().flat_map(|i| i.location);
        Spans::collect(locations.map(|l| (l.path, l.span)))
    }

    fn collect<P, S>(locations: impl Iterator<Item = (P, S)>) -> Spans
    where
        P: AsRef<[i32]> + Into<Vec<i32>>,
        S: AsRef<[i32]>,
    {
        let mut map =
            FastMap::with_capacity_and_hasher(locations.size_hint().0, Default::default());
        for (path, span) in locations {
            // Declarations have even-length paths (tag, index pairs); odd-length ones point at
            // their parts (name, number, type), which findings never need.
            if path.as_ref().len() % 2 != 0 {
                continue;
            }
            if let [line, col, ..] = span.as_ref() {
                let entry = (
                    u32::try_from(*line).unwrap_or(0) + 1,
                    u32::try_from(*col).unwrap_or(0) + 1,
                );
                map.entry(path.into()).or_insert(entry);
            }
        }
        Spans(map)
    }
}

impl Spans {
    /// The 1-based line and column of the declaration at descriptor `path`.
    pub(crate) fn get(&self, path: &[i32]) -> Option<(u32, u32)> {
        self.0.get(path).copied()
    }
}
