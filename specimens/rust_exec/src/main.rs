// A miniature coding agent in the style of a Rust CLI harness: the model calls a
// `shell_command` tool whose JSON arguments carry one command string, which the
// harness runs as `bash -lc <command>`.
use std::io::{self, BufRead};
use std::process::Command;

use serde::Deserialize;
use serde_json::Value;

#[derive(Deserialize)]
struct ShellCommandArgs {
    command: String,
    #[serde(default)]
    workdir: Option<String>,
}

fn run_shell_command(arguments: &str) -> Result<String, String> {
    let args: ShellCommandArgs = serde_json::from_str(arguments).map_err(|e| e.to_string())?;
    let output = Command::new("bash")
        .arg("-lc")
        .arg(&args.command)
        .current_dir(args.workdir.unwrap_or_else(|| ".".to_string()))
        .output()
        .map_err(|e| e.to_string())?;
    Ok(String::from_utf8_lossy(&output.stdout).into_owned())
}

fn main() {
    // Each stdin line is one model event: {"type": "function_call", "name": ..., "arguments": "..."}.
    for line in io::stdin().lock().lines().map_while(Result::ok) {
        let event: Value = match serde_json::from_str(&line) {
            Ok(v) => v,
            Err(_) => continue,
        };
        if event["name"] == "shell_command" {
            let arguments = event["arguments"].as_str().unwrap_or("{}");
            match run_shell_command(arguments) {
                Ok(out) => println!("{out}"),
                Err(err) => eprintln!("tool error: {err}"),
            }
        }
    }
}
