//! A loopback HTTP/1.1 server inside the test process, standing in for embedding and
//! chat APIs: every request is recorded (method, path, headers, JSON body) and answered
//! by the test's handler, which may delay, fail or answer malformed bodies.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;

/// One request as the server saw it.
#[derive(Debug, Clone)]
pub struct Request {
    pub method: String,
    pub path: String,
    /// Header names lower-cased.
    pub headers: Vec<(String, String)>,
    pub body: Value,
    /// The body's bytes as sent (what a request signature covers).
    pub raw_body: Vec<u8>,
}

impl Request {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.as_str())
    }
}

/// The handler's answer.
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: String,
    /// Wait this long before answering (to exceed a client's timeout).
    pub delay: Duration,
}

impl Reply {
    pub fn json(value: Value) -> Reply {
        Reply {
            status: 200,
            headers: Vec::new(),
            body: value.to_string(),
            delay: Duration::ZERO,
        }
    }

    pub fn status(status: u16, body: &str) -> Reply {
        Reply {
            status,
            headers: Vec::new(),
            body: body.to_owned(),
            delay: Duration::ZERO,
        }
    }

    pub fn with_header(mut self, name: &str, value: &str) -> Reply {
        self.headers.push((name.to_owned(), value.to_owned()));
        self
    }

    pub fn delayed(mut self, delay: Duration) -> Reply {
        self.delay = delay;
        self
    }
}

type Handler = dyn Fn(&Request, usize) -> Reply + Send + Sync;

/// A running server; it stops with the test process.
pub struct Server {
    pub base_url: String,
    requests: Arc<Mutex<Vec<Request>>>,
}

impl Server {
    /// Starts a server on 127.0.0.1 whose `handler` gets each request and its 0-based
    /// arrival number.
    pub fn start(handler: impl Fn(&Request, usize) -> Reply + Send + Sync + 'static) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let base_url = format!("http://{}/v1", listener.local_addr().unwrap());
        let requests: Arc<Mutex<Vec<Request>>> = Arc::default();
        let handler: Arc<Handler> = Arc::new(handler);
        let recorded = Arc::clone(&requests);
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let handler = Arc::clone(&handler);
                let recorded = Arc::clone(&recorded);
                std::thread::spawn(move || serve(stream, &*handler, &recorded));
            }
        });
        Server { base_url, requests }
    }

    /// Every request so far, in arrival order.
    pub fn requests(&self) -> Vec<Request> {
        self.requests.lock().unwrap().clone()
    }

    pub fn request_count(&self) -> usize {
        self.requests.lock().unwrap().len()
    }
}

/// Answers requests on one connection until the client closes it.
fn serve(stream: TcpStream, handler: &Handler, recorded: &Mutex<Vec<Request>>) {
    let mut writer = stream.try_clone().unwrap();
    let mut reader = BufReader::new(stream);
    loop {
        let mut request_line = String::new();
        if reader.read_line(&mut request_line).unwrap_or(0) == 0 {
            return;
        }
        let mut parts = request_line.split_whitespace();
        let method = parts.next().unwrap_or("").to_owned();
        let path = parts.next().unwrap_or("").to_owned();
        let mut headers = Vec::new();
        loop {
            let mut line = String::new();
            if reader.read_line(&mut line).unwrap_or(0) == 0 {
                return;
            }
            let line = line.trim_end();
            if line.is_empty() {
                break;
            }
            if let Some((name, value)) = line.split_once(':') {
                headers.push((name.trim().to_ascii_lowercase(), value.trim().to_owned()));
            }
        }
        let length: usize = headers
            .iter()
            .find(|(name, _)| name == "content-length")
            .and_then(|(_, value)| value.parse().ok())
            .unwrap_or(0);
        let mut body = vec![0; length];
        if reader.read_exact(&mut body).is_err() {
            return;
        }
        let request = Request {
            method,
            path,
            headers,
            body: serde_json::from_slice(&body).unwrap_or(Value::Null),
            raw_body: body,
        };
        let number = {
            let mut all = recorded.lock().unwrap();
            all.push(request.clone());
            all.len() - 1
        };
        let reply = handler(&request, number);
        std::thread::sleep(reply.delay);
        let mut head = format!(
            "HTTP/1.1 {} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\n",
            reply.status,
            reply.body.len()
        );
        for (name, value) in &reply.headers {
            head.push_str(&format!("{name}: {value}\r\n"));
        }
        head.push_str("\r\n");
        if writer.write_all(head.as_bytes()).is_err()
            || writer.write_all(reply.body.as_bytes()).is_err()
        {
            return;
        }
    }
}

/// A deterministic embedding of `text`: `dimension` numbers from its bytes, so the same
/// text always gets the same vector and different texts different ones.
pub fn fake_vector(text: &str, dimension: usize) -> Vec<f32> {
    let mut vector = vec![0f32; dimension];
    for (position, word) in text.split_whitespace().enumerate() {
        let hash = word.bytes().fold(1469598103934665603u64, |hash, byte| {
            (hash ^ u64::from(byte)).wrapping_mul(1099511628211)
        });
        vector[(hash % dimension as u64) as usize] += 1.0 + (position % 3) as f32 * 0.01;
    }
    vector
}

/// An OpenAI-style embeddings answer for the request's `input` list.
pub fn openai_embeddings(request: &Request, dimension: usize) -> Value {
    let inputs = request.body["input"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let data: Vec<Value> = inputs
        .iter()
        .enumerate()
        .map(|(index, text)| {
            serde_json::json!({"object": "embedding", "index": index,
                               "embedding": fake_vector(text.as_str().unwrap_or(""), dimension)})
        })
        .collect();
    serde_json::json!({"object": "list", "data": data, "model": request.body["model"],
                       "usage": {"prompt_tokens": inputs.len() * 3, "total_tokens": inputs.len() * 3}})
}

/// A chat-completions answer with `n` choices derived from the prompt.
pub fn chat_completion(request: &Request, n: usize) -> Value {
    let prompt = request.body["messages"][0]["content"]
        .as_str()
        .unwrap_or("");
    let question = prompt.rsplit("Question:").next().unwrap_or(prompt);
    let question = question.split("\n\n").next().unwrap_or(question).trim();
    let choices: Vec<Value> = (0..n)
        .map(|index| {
            serde_json::json!({"index": index, "finish_reason": "stop",
                "message": {"role": "assistant",
                            "content": format!("{question} is answered by the deployment notes, variant {index}.")}})
        })
        .collect();
    serde_json::json!({"id": "chatcmpl-test", "object": "chat.completion", "choices": choices,
                       "usage": {"prompt_tokens": 40, "completion_tokens": 12 * n, "total_tokens": 40 + 12 * n}})
}
