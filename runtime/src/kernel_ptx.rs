//! PTX supplied beside an executable whose kernels carry only cubins.
//!
//! XLA:GPU embeds each kernel as a cubin for one SM (`custom_kernel_thunk.custom_kernel.
//! kernel_spec.cubin`); the emulated device runs PTX. XLA dumps the PTX of the same compile
//! (`--xla_dump_to`), split over several files, some holding no kernel (the constants module).
//! A [`KernelPtx`] indexes those files by their `.entry` names, and the loader
//! ([`crate::load::load_with_kernel_ptx`]) launches each cubin-only kernel from the file that
//! defines its entry, as if the thunk had embedded that PTX (step 6 checks it the same way).
use std::collections::BTreeMap;
use std::sync::Arc;

use crate::error::{invalid, Result};

/// Files of supplied PTX, checked and indexed by `.entry` name.
#[derive(Debug, Clone, Default)]
pub struct KernelPtx {
    files: Vec<PtxFile>,
    /// The module-scope `.global` arrays of every file.
    globals: Vec<GlobalArray>,
    /// Entry name → index into `files`.
    by_entry: BTreeMap<String, usize>,
}

/// One supplied file.
#[derive(Debug, Clone)]
struct PtxFile {
    /// How messages name it (the path given to `aot run --kernel-ptx`).
    label: String,
    text: Arc<str>,
    outline: ptx::Outline,
}

/// A module-scope `.global` array of a supplied file. XLA:GPU keeps each constant so
/// (`buffer_for_<constant>`, zero-initialized when the constant is all zeros): in its constants
/// module (a file with no kernel) or beside the kernels that read it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GlobalArray {
    /// The file's label.
    pub label: String,
    /// The array's name.
    pub name: String,
    /// Whether its initializer has a non-zero element (no initializer: zeros).
    pub nonzero: bool,
}

/// The PTX that supplies one kernel.
#[derive(Debug, Clone, Copy)]
pub struct SuppliedKernel<'a> {
    /// The file's label.
    pub label: &'a str,
    /// The file's text.
    pub text: &'a str,
    /// The file's outline (header and signatures).
    pub outline: &'a ptx::Outline,
}

/// Most files one [`KernelPtx`] holds (XLA splits a module's kernels over a few per compile
/// thread; a thousand is far beyond any module and bounds the index).
pub const MAX_FILES: usize = 1024;

impl KernelPtx {
    /// Parses each `(label, text)` (signatures only; bodies are translated at first launch) and
    /// indexes its defined `.entry` kernels. A file that does not parse, an entry defined in two
    /// files, or more than [`MAX_FILES`] files is INVALID_ARGUMENT naming the file.
    pub fn new(files: impl IntoIterator<Item = (String, String)>) -> Result<KernelPtx> {
        let mut out = KernelPtx::default();
        for (label, text) in files {
            if out.files.len() == MAX_FILES {
                return Err(invalid(format!(
                    "more than {MAX_FILES} PTX files supplied (runtime::MAX_KERNEL_PTX_FILES)"
                )));
            }
            let outline = ptx::outline(&text).map_err(|e| {
                invalid(format!(
                    "supplied PTX {label}: line {}:{}: {}",
                    e.line, e.column, e.message
                ))
            })?;
            let index = out.files.len();
            out.globals.extend(global_arrays(&label, &text)?);
            for entry in outline.entries() {
                if let Some(&first) = out.by_entry.get(&entry.name) {
                    let first = out.files.get(first).map_or("", |f| f.label.as_str());
                    return Err(invalid(format!(
                        "supplied PTX {label} defines .entry {}, which {first} defines too; each kernel must come from one file",
                        entry.name
                    )));
                }
                out.by_entry.insert(entry.name.clone(), index);
            }
            out.files.push(PtxFile {
                label,
                text: text.into(),
                outline,
            });
        }
        Ok(out)
    }

    /// Whether no file was supplied.
    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }

    /// How many files were supplied.
    pub fn file_count(&self) -> usize {
        self.files.len()
    }

    /// The file defining `.entry name`, if any.
    pub fn kernel(&self, name: &str) -> Option<SuppliedKernel<'_>> {
        let f = self.files.get(*self.by_entry.get(name)?)?;
        Some(SuppliedKernel {
            label: &f.label,
            text: &f.text,
            outline: &f.outline,
        })
    }

    /// The module-scope `.global` arrays of every supplied file.
    pub fn globals(&self) -> &[GlobalArray] {
        &self.globals
    }

    /// Every supplied entry name, sorted (for messages).
    pub fn entry_names(&self) -> impl Iterator<Item = &str> {
        self.by_entry.keys().map(String::as_str)
    }
}

/// The module-scope `.global` declarators of a file (parsed in full once, at load).
fn global_arrays(label: &str, text: &str) -> Result<Vec<GlobalArray>> {
    let module = ptx::parse(text).map_err(|e| {
        invalid(format!(
            "supplied PTX {label}: line {}:{}: {}",
            e.line, e.column, e.message
        ))
    })?;
    let mut out = Vec::new();
    for d in &module.directives {
        let ptx::Directive::Variable(v) = d else {
            continue;
        };
        if v.space != ptx::StateSpace::Global {
            continue;
        }
        for decl in &v.declarators {
            out.push(GlobalArray {
                label: label.to_owned(),
                name: decl.name.clone(),
                nonzero: decl.init.as_ref().is_some_and(nonzero),
            });
        }
    }
    Ok(out)
}

/// Whether an initializer has a non-zero element (an address counts as non-zero).
fn nonzero(i: &ptx::Initializer) -> bool {
    match i {
        ptx::Initializer::Imm(v) => v.bits() != 0,
        ptx::Initializer::List(items) => items.iter().any(nonzero),
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(entries: &[&str]) -> String {
        let mut s = String::from(".version 8.0\n.target sm_80\n.address_size 64\n");
        for e in entries {
            s.push_str(&format!(
                ".visible .entry {e}(\n.param .u64 p0\n)\n{{\n  ret;\n}}\n"
            ));
        }
        s
    }

    #[test]
    fn entries_are_indexed_by_name_across_files() -> Result<()> {
        let k = KernelPtx::new([
            ("a.ptx".to_owned(), file(&["k1", "k2"])),
            ("consts.ptx".to_owned(), file(&[])),
            ("b.ptx".to_owned(), file(&["k3"])),
        ])?;
        assert_eq!(k.kernel("k3").map(|s| s.label), Some("b.ptx"));
        assert_eq!(k.kernel("k2").map(|s| s.label), Some("a.ptx"));
        assert!(k.kernel("k4").is_none());
        assert_eq!(k.entry_names().collect::<Vec<_>>(), ["k1", "k2", "k3"]);
        assert_eq!(k.file_count(), 3);
        Ok(())
    }

    #[test]
    fn module_scope_globals_are_listed_with_whether_they_are_zero() -> Result<()> {
        let consts = ".version 8.0\n.target sm_80\n.address_size 64\n.visible .global .align 256 .b8 buffer_for_c0[64];\n.visible .global .align 256 .b8 buffer_for_c1[64] = {0, 0, 192, 127};\n.visible .global .align 256 .b8 buffer_for_c2[8] = {0, 0};\n";
        let k = KernelPtx::new([
            ("k.ptx".to_owned(), file(&["k1"])),
            ("consts.ptx".to_owned(), consts.to_owned()),
        ])?;
        let got: Vec<(&str, bool)> = k
            .globals()
            .iter()
            .map(|g| (g.name.as_str(), g.nonzero))
            .collect();
        assert_eq!(
            got,
            [
                ("buffer_for_c0", false),
                ("buffer_for_c1", true),
                ("buffer_for_c2", false)
            ]
        );
        Ok(())
    }

    #[test]
    fn an_entry_in_two_files_is_refused() {
        let e = KernelPtx::new([
            ("a.ptx".to_owned(), file(&["k1"])),
            ("b.ptx".to_owned(), file(&["k1"])),
        ])
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "INVALID_ARGUMENT: supplied PTX b.ptx defines .entry k1, which a.ptx defines too; each kernel must come from one file"
        );
    }

    #[test]
    fn a_file_that_does_not_parse_is_named() {
        let e = KernelPtx::new([("bad.ptx".to_owned(), "not ptx".to_owned())]).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("INVALID_ARGUMENT: supplied PTX bad.ptx: line 1:"),
            "{e}"
        );
    }
}
