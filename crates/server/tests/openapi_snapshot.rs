//! docs/openapi.json is the generated OpenAPI document, kept in the repo so readers see the API
//! without running the daemon. This test fails when the code and the copy drift apart; run it with
//! TROUPE_UPDATE_OPENAPI=1 to write the current document.

#[test]
fn docs_openapi_json_matches_the_generated_document() {
    let (_, doc) = troupe_server::api();
    let generated = serde_json::to_string_pretty(&doc).unwrap() + "\n";
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/openapi.json");
    if std::env::var_os("TROUPE_UPDATE_OPENAPI").is_some() {
        std::fs::write(&path, &generated).unwrap();
        return;
    }
    let stored = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        stored == generated,
        "docs/openapi.json is out of date; regenerate it with \
         TROUPE_UPDATE_OPENAPI=1 cargo test -p troupe-server --test openapi_snapshot"
    );
}
