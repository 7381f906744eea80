//! How every command that reads a manifest reads it: `Source` (the shared flags, parsed
//! in main.rs) turned into `Options`, then the library's `analyze_with`.
//!
//! Takes the manifest's path and, for `analyze_reading`, a list to add every file and
//! folder the analysis read to (the manifest, `--templates`, what the manifest names),
//! also when a read fails: `build` spares them and `build --watch` watches them.
//! Returns the `Analysis`, `Failure::Fatal` when the manifest or an `--allow-read` or
//! `--templates` folder cannot be read, or `Failure::Template` when a template failed.
//!
//! Must never read a file the library's bounded reads do not (`input::read_manifest`,
//! `templates::load_dir`), nor let a `--templates` file lead outside its folder or the
//! scope.

use std::path::Path;
use std::sync::Arc;

use connectorgen_core::{Analysis, Input, Options, analyze_with, input, templates};

use crate::{Failure, Source, fatal};

impl Source {
    /// The `Options` these flags give for `manifest`: its folder, the `--allow-read`
    /// folders (each must be one), and the `--templates` folder read (added to
    /// `inputs`).
    pub(crate) fn options(
        &self,
        manifest: &Path,
        inputs: &mut Vec<Input>,
    ) -> Result<Options, Failure> {
        for dir in &self.allow_read {
            if !dir.is_dir() {
                return Err(Failure::Fatal(format!(
                    "--allow-read {}: not a folder; give a folder the manifest may name files in",
                    dir.display()
                )));
            }
        }
        let mut options = Options {
            targets: Some(self.targets.clone()),
            templates: None,
            manifest_dir: manifest.parent().map(Path::to_path_buf),
            allow_read: self.allow_read.clone(),
            max_bytes: self.max_bytes,
            sandbox: false,
            base_document: None,
            parsed_base: None,
            template_fuel: self.template_fuel,
            max_template_output: self.max_template_output,
            max_alias_expansion: self.max_alias_expansion,
            plain_parse: false,
            stream: false,
        };
        if let Some(dir) = &self.templates {
            // The folder was named on the command line; its files may still be links
            // from a pull request, so each must lead inside it (or the scope).
            let scope = Arc::new(options.scope().with(dir));
            let read = templates::load_dir(dir, &scope);
            inputs.push(Input::templates(dir.clone(), scope, &read));
            options.templates = Some(read.map_err(fatal)?);
        }
        Ok(options)
    }

    pub(crate) fn analyze(&self, manifest: &Path) -> Result<Analysis, Failure> {
        self.analyze_reading(manifest, &mut Vec::new(), false)
    }

    /// `analyze`, adding to `inputs` every file and folder it read (for `--watch`), also
    /// when a read fails. With `stream` (`build`), openapi.json is left to
    /// `Analysis::streamed` rather than held in `outputs`.
    pub(crate) fn analyze_reading(
        &self,
        manifest: &Path,
        inputs: &mut Vec<Input>,
        stream: bool,
    ) -> Result<Analysis, Failure> {
        let text = input::read_manifest(manifest, self.max_bytes);
        inputs.push(Input::file(manifest.to_path_buf(), self.max_bytes, &text));
        let text = text.map_err(fatal)?;
        let mut options = self.options(manifest, inputs)?;
        options.stream = stream;
        let analysis = analyze_with(&manifest.display().to_string(), Arc::new(text), &options)
            .map_err(|e| Failure::Template(Box::new(e)))?;
        inputs.extend(analysis.inputs.iter().cloned());
        Ok(analysis)
    }
}
