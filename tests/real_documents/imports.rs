//! `import` on the real documents: the import cases in `real_documents/import/` (each
//! naming its document under `../shared/`), and every real document importing to a
//! manifest that builds and checks (`support/imports.rs` runs both, as for the
//! project's own documents in import.rs).

use crate::support::imports;

#[test]
fn import_cases() {
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path("snapshots");
    settings.bind(|| {
        insta::glob!("import", "*.args", |path| {
            insta::assert_snapshot!(imports::case(path));
        });
    });
}

#[test]
fn every_real_document_imports_to_a_manifest_that_builds_and_checks() {
    crate::support::real::root();
    imports::every_document(
        &[
            "../shared/provider-docs/project/examples/specs",
            "../shared/provider-docs/project/tests/fixtures",
        ],
        // JSON Schemas, not OpenAPI documents.
        &[
            (
                "../shared/provider-docs/project/tests/fixtures/mcp-2025-11-25.schema.json",
                "base-not-openapi",
            ),
            (
                "../shared/provider-docs/project/tests/fixtures/sarif-2.1.0.schema.json",
                "base-not-openapi",
            ),
        ],
        // Multi-file: the root is imported with its folder (the other files are parts
        // of it, not documents).
        &[(
            "../shared/provider-docs/project/examples/specs/digitalocean/specification/",
            "DigitalOcean-public.v2.yaml",
        )],
        &[],
    );
}
