//! The protocol edge: [`super::Doors`] served over stdio with rmcp, the
//! official MCP SDK. Each call runs on tokio's blocking pool (recall, git
//! and an ask are blocking code); a refusal is a tool error the client's
//! model reads, never a protocol error or a crash of the server.

use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
    ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde_json::Value;

use super::{Doors, ToolDef};

/// What the server tells a client about itself when it connects.
const INSTRUCTIONS: &str = "The memory of a long-lived agent run by hearth: markdown files in a \
git repository, written by the agent and its operator. `recall` finds what it knows (cited \
path:lines@commit), `read` opens a file, `status` says whether it is healthy.";

struct Handler {
    doors: Arc<Doors>,
}

fn tool(def: &ToolDef) -> Tool {
    let schema = match &def.schema {
        Value::Object(map) => map.clone(),
        _ => Default::default(),
    };
    Tool::new(def.name, def.description, Arc::new(schema))
        .with_title(def.title)
        .with_annotations(
            ToolAnnotations::with_title(def.title)
                .read_only(def.read_only)
                .destructive(false)
                .open_world(false),
        )
}

impl ServerHandler for Handler {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("hearth", env!("CARGO_PKG_VERSION")))
            .with_instructions(INSTRUCTIONS)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(
            self.doors.tools().iter().map(tool).collect(),
        ))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let doors = Arc::clone(&self.doors);
        let name = request.name.to_string();
        let arguments = Value::Object(request.arguments.unwrap_or_default());
        let outcome = tokio::task::spawn_blocking(move || doors.call(&name, &arguments)).await;
        let result = match outcome {
            Ok(Ok(reply)) => {
                let mut result = CallToolResult::success(vec![ContentBlock::text(reply.text)]);
                result.structured_content = reply.structured;
                result
            }
            Ok(Err(refusal)) => CallToolResult::error(vec![ContentBlock::text(refusal.text())]),
            // A panic inside a call ends that call, not the server.
            Err(e) => CallToolResult::error(vec![ContentBlock::text(format!(
                "the call failed inside hearth: {e}; this is a bug, please report it"
            ))]),
        };
        Ok(result.into())
    }
}

/// Serves `doors` on stdin/stdout until the client closes stdin. Only the
/// protocol goes to stdout; hearth's own log goes to stderr.
pub fn serve(doors: Doors) -> Result<(), std::io::Error> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    runtime.block_on(async move {
        let handler = Handler {
            doors: Arc::new(doors),
        };
        let running = handler
            .serve(rmcp::transport::stdio())
            .await
            .map_err(std::io::Error::other)?;
        running.waiting().await.map_err(std::io::Error::other)?;
        Ok(())
    })
}
