//! `/v1/nodes`: the daemon processes sharing the database, with their heartbeats.

mod support;

use support::TestApp;

#[tokio::test]
async fn the_daemon_lists_itself_as_a_live_node() {
    let app = TestApp::start().await;
    let nodes = app.get("/v1/nodes").await.expect(200);
    let nodes = nodes.as_array().expect("a list");
    assert_eq!(nodes.len(), 1, "{nodes:?}");
    let me = &nodes[0];
    assert_eq!(me["this_node"], true);
    assert_eq!(me["alive"], true);
    assert_eq!(me["pid"], std::process::id());
    assert_eq!(me["host"], troupe_engine::host_name());
    assert!(me["stopped_at"].is_null() && me["reaped_at"].is_null());
    assert_eq!(me["threads"], serde_json::json!([]));
    assert!(me["heartbeat_at"].as_i64().unwrap() >= me["started_at"].as_i64().unwrap());
}
