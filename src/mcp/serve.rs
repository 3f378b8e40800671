//! The protocol edge: [`super::Doors`] served over stdio with rmcp, the
//! official MCP SDK (its handler serves HTTP too: `http.rs`). Each call runs on tokio's blocking pool (recall, git
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

use super::{guard, Doors, ToolDef};

/// What the server tells a client about itself when it connects.
const INSTRUCTIONS: &str = "The memory of a long-lived agent run by hearth: markdown files in a \
git repository, written by the agent and its operator. `recall` finds what it knows (cited \
path:lines@commit), `read` opens a file, `status` says whether it is healthy.";

/// The SDK's handler of one client's session: the doors it calls.
pub(super) struct Handler {
    doors: Arc<Doors>,
}

impl Handler {
    /// A session's handler over `doors` (shared by every session).
    pub(super) fn new(doors: Arc<Doors>) -> Handler {
        Handler { doors }
    }
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
        // The SDK talks to one end of a pipe; the guard stands between
        // the other end and stdin/stdout (`guard`).
        let (sdk_side, guard_side) = tokio::io::duplex(64 * 1024);
        let (from_sdk, to_sdk) = tokio::io::split(guard_side);
        let (lines_out, lines) = tokio::sync::mpsc::channel::<String>(64);
        let writer = tokio::spawn(write_lines(lines));
        let reader = tokio::spawn(read_guarded(to_sdk, lines_out.clone()));
        let relay = tokio::spawn(relay_sdk(from_sdk, lines_out));
        let running = handler
            .serve(tokio::io::split(sdk_side))
            .await
            .map_err(std::io::Error::other)?;
        running.waiting().await.map_err(std::io::Error::other)?;
        let _ = reader.await;
        let _ = relay.await;
        let _ = writer.await;
        Ok(())
    })
}

/// Reads stdin a line at a time, never holding more than
/// [`guard::MAX_LINE`] of one: judged lines go on to the SDK, the others
/// are answered on stdout. At end of input the SDK's side is closed.
async fn read_guarded(
    mut to_sdk: tokio::io::WriteHalf<tokio::io::DuplexStream>,
    answers: tokio::sync::mpsc::Sender<String>,
) {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
    let mut stdin = tokio::io::BufReader::new(tokio::io::stdin());
    let mut line: Vec<u8> = Vec::new();
    let mut over = false;
    loop {
        let chunk = match stdin.fill_buf().await {
            Ok([]) | Err(_) => break,
            Ok(chunk) => chunk,
        };
        let (take, ends) = match chunk.iter().position(|b| *b == b'\n') {
            Some(i) => (i, true),
            None => (chunk.len(), false),
        };
        if !over {
            if line.len() + take > guard::MAX_LINE {
                over = true;
                line = Vec::new();
            } else {
                line.extend_from_slice(&chunk[..take]);
            }
        }
        stdin.consume(take + usize::from(ends));
        if !ends {
            continue;
        }
        let verdict = if over {
            Err(guard::too_long())
        } else if line.iter().all(u8::is_ascii_whitespace) {
            Ok(false)
        } else {
            guard::judge(&line).map(|()| true)
        };
        match verdict {
            Ok(true) => {
                line.push(b'\n');
                if to_sdk.write_all(&line).await.is_err() {
                    break;
                }
            }
            Ok(false) => {}
            Err(guard::ErrorResponse(answer)) => {
                if answers.send(answer).await.is_err() {
                    break;
                }
            }
        }
        line.clear();
        over = false;
    }
    let _ = to_sdk.shutdown().await;
}

/// The SDK's lines, on to stdout.
async fn relay_sdk(
    from_sdk: tokio::io::ReadHalf<tokio::io::DuplexStream>,
    lines: tokio::sync::mpsc::Sender<String>,
) {
    use tokio::io::AsyncBufReadExt;
    let mut from_sdk = tokio::io::BufReader::new(from_sdk).lines();
    while let Ok(Some(line)) = from_sdk.next_line().await {
        if lines.send(line).await.is_err() {
            break;
        }
    }
}

/// One writer of stdout, a whole line at a time.
async fn write_lines(mut lines: tokio::sync::mpsc::Receiver<String>) {
    use tokio::io::AsyncWriteExt;
    let mut stdout = tokio::io::stdout();
    while let Some(mut line) = lines.recv().await {
        line.push('\n');
        if stdout.write_all(line.as_bytes()).await.is_err() || stdout.flush().await.is_err() {
            break;
        }
    }
}
