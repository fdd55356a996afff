//! Package typosquats (`PACKAGE_TYPOSQUAT`): installs that name a package one slip away from a
//! popular one ask; the popular names themselves, paths, files, URLs and real look-alike names
//! stay allowed.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use airlock_core::{Decision, ReasonCode, Tier};
use airlock_shell::analyse;
use airlock_shell::typosquat::{Ecosystem, popular};

fn typosquat(cmd: &str) -> Option<(Decision, Tier, String)> {
    let a = analyse(cmd);
    a.reasons
        .iter()
        .find(|r| r.code == ReasonCode::PackageTyposquat)
        .map(|r| (r.decision, r.tier, r.message.clone()))
}

#[test]
fn slips_for_popular_names_ask() {
    for (cmd, like) in [
        // PyPI, every installer
        ("pip install reqeusts", "`requests`"),
        ("pip3 install -U numpyy", "`numpy`"),
        ("pip3.12 install --user urlib3==2.0", "`urllib3`"),
        ("python3 -m pip install djangoo", "`django`"),
        (
            "python -m pip install --upgrade beautifulsop4",
            "`beautifulsoup4`",
        ),
        ("uv pip install colourama", "`colorama`"),
        ("uv add pydnatic", "`pydantic`"),
        ("uv tool install bkack-formatter blakc", "`black`"),
        ("poetry add --group dev pytset", "`pytest`"),
        ("pipx install poetyr", "`poetry`"),
        ("pipenv install python-dateutill", "`python-dateutil`"),
        ("pip install pythondateutil", "`python-dateutil`"),
        ("pip install python3-dateutil", "`python-dateutil`"),
        ("pip install 'matplotlbi>=3.8'", "`matplotlib`"),
        ("pip install scikit-lern", "`scikit-learn`"),
        ("pip install -r requirements.txt tensorflwo", "`tensorflow`"),
        ("sudo pip install crytpography", "`cryptography`"),
        ("pip download reqeusts", "`requests`"),
        ("uvx blakc .", "`black`"),
        // npm and friends
        ("npm install expresss", "`express`"),
        ("npm i -D loadsh", "`lodash`"),
        ("npm add axois@1.6.0", "`axios`"),
        ("npm install --save crossenv", "`cross-env`"),
        ("npm install cross_env", "`cross-env`"),
        ("yarn add reactt", "`react`"),
        ("yarn global add nodmeon", "`nodemon`"),
        ("pnpm add typescirpt", "`typescript`"),
        ("bun add mongose", "`mongoose`"),
        ("npx prettierr --write .", "`prettier`"),
        ("npm install electorn", "`electron`"),
        ("npm i left-pad@1 webpackk", "`webpack`"),
        // crates.io
        ("cargo add serde_jsno", "`serde_json`"),
        ("cargo add tokio --features full serdde", "`serde`"),
        ("cargo install rigprep", "`ripgrep`"),
        // RubyGems
        ("gem install rials", "`rails`"),
        ("gem install nokogir", "`nokogiri`"),
        ("bundle add sidekiqq", "`sidekiq`"),
    ] {
        let got = typosquat(cmd);
        let Some((decision, tier, msg)) = got else {
            panic!("{cmd}: no typosquat finding: {:?}", analyse(cmd));
        };
        assert_eq!(decision, Decision::Ask, "{cmd}");
        assert_eq!(tier, Tier::Medium, "{cmd}");
        assert!(msg.contains(like), "{cmd}: {msg}");
        assert_eq!(analyse(cmd).decision, Decision::Ask, "{cmd}");
    }
}

#[test]
fn popular_names_paths_files_and_urls_stay_allowed() {
    for cmd in [
        "pip install requests",
        "pip install Requests==2.31.0",
        "pip install python_dateutil",
        "pip install 'requests[socks]>=2' 'uvicorn[standard]'",
        "pip install -r requirements.txt",
        "pip install -r requirments.txt",
        "pip install -e .",
        "pip install -e ./reqeusts",
        "pip install ./dist/reqeusts-1.0-py3-none-any.whl",
        "pip install git+https://github.com/psf/requests.git",
        "pip install https://example.com/pkgs/numpyy-1.0.tar.gz",
        "pip install -i https://pypi.example.com/simple numpy",
        "pip install --index-url https://reqeusts.example.com/simple requests",
        "pip install boto boto3 psycopg psycopg2 jinja2",
        "pip uninstall reqeusts",
        "pip show reqeusts",
        "pip install six tox h11",
        "pip install \"$PKG\"",
        "pip install hyper unicorn futures serde",
        "python3 -m pip install --upgrade pip setuptools wheel",
        "python3 -m venv .venv",
        "uv pip install -r requirements.in",
        "uv add 'fastapi[standard]' httpx",
        "uv run pytest",
        "poetry add --group dev pytest-cov",
        "poetry install",
        "pipx install poetry",
        "pipx run black .",
        "npm install",
        "npm ci",
        "npm install express lodash",
        "npm install lodash.merge",
        "npm install @types/nodee",
        "npm install ./packages/expresss",
        "npm install github:expressjs/express",
        "npm install expressjs/express",
        "npm install my-express@npm:express@4",
        "npm install https://registry.example.com/expresss-1.0.0.tgz",
        "npm i -g pnpm",
        "npm run expresss",
        "npm install --registry https://npm.example.com express",
        "npm install request",
        "yarn add react react-dom",
        "yarn",
        "pnpm install",
        "pnpm add -D vitest",
        "bun install",
        "bun add zod",
        "npx create-react-app my-app",
        "npx tsc --noEmit",
        "npx prettier --write expresss.js",
        "cargo add serde serde_json serde-json",
        "cargo add tokio --features full",
        "cargo install ripgrep",
        "cargo install --path .",
        "cargo install --git https://github.com/example/rigprep rigprep",
        "cargo add reqwest",
        "cargo build --release",
        "gem install rails bundler",
        "gem install nokogiri -v 1.15.0",
        "gem install ./pkg/rials-1.0.gem",
        "bundle install",
        "echo pip install reqeusts",
        "git commit -m 'pip install reqeusts'",
    ] {
        assert_eq!(typosquat(cmd), None, "{cmd}: {:?}", analyse(cmd));
    }
}

/// Real packages whose names sit close to a popular one (forks, version siblings, plugins).
#[test]
fn real_neighbours_of_popular_names_stay_allowed() {
    for cmd in [
        "pip install psycopg-binary psycopg2-binary",
        "pip install pyaml aiofile",
        "pip install pypdf pypdf2 types-pyyaml flask_cors",
        "pip install flake8-bugbear pytest-timeout pytest-env",
        "pip install opencv-python-headless jupyterlab-git",
        "pip install langchain-openai langchain-community",
        "npm install lodash.debounce cross-fetch isomorphic-fetch",
        "npm install esbuild-loader ts-node-dev tsconfig-paths dotenv-cli",
        "npm install redux-toolkit fastify-cors axios-retry",
        "cargo add serde_yml tokio-stream",
        "gem install rubocop-rspec rspec-its pry-byebug",
    ] {
        assert_eq!(typosquat(cmd), None, "{cmd}: {:?}", analyse(cmd));
    }
}

#[test]
fn wrapped_installs_are_checked() {
    for cmd in [
        "sudo -H pip3 install reqeusts",
        "bash -c 'npm install expresss'",
        "cd app && npm install expresss",
        "timeout 60 pip install reqeusts",
        "env PIP_NO_CACHE_DIR=1 pip install reqeusts",
        "docker run --rm python:3 pip install reqeusts",
        "RUN_ME=1 pip install reqeusts",
    ] {
        assert!(typosquat(cmd).is_some(), "{cmd}: {:?}", analyse(cmd));
    }
}

#[test]
fn every_listed_name_installs_cleanly() {
    for (eco, cmd) in [
        (Ecosystem::PyPI, "pip install"),
        (Ecosystem::Npm, "npm install"),
        (Ecosystem::Crates, "cargo add"),
        (Ecosystem::RubyGems, "gem install"),
        (Ecosystem::Go, "go get"),
    ] {
        for name in &popular(eco).names {
            let line = format!("{cmd} {name}");
            assert_eq!(typosquat(&line), None, "{line}");
        }
    }
}

#[test]
fn go_modules() {
    for (cmd, like) in [
        (
            "go get github.com/stretchr/testfiy",
            "`github.com/stretchr/testify`",
        ),
        (
            "go get -u github.com/spf13/cobraa@latest",
            "`github.com/spf13/cobra`",
        ),
        (
            "go install github.com/gin-gnoic/gin@v1.9.0",
            "`github.com/gin-gonic/gin`",
        ),
        (
            "go get github.com/stretchr/testify github.com/sirupsen/logrrus",
            "`github.com/sirupsen/logrus`",
        ),
        (
            "go run github.com/sirupsen/logurs/cmd/x@latest",
            "`github.com/sirupsen/logrus`",
        ),
    ] {
        let Some((decision, _, msg)) = typosquat(cmd) else {
            panic!("{cmd}: no typosquat finding: {:?}", analyse(cmd));
        };
        assert_eq!(decision, Decision::Ask, "{cmd}");
        assert!(msg.contains(like), "{cmd}: {msg}");
    }
    for cmd in [
        "go get github.com/stretchr/testify@v1.9.0",
        "go install golang.org/x/tools/cmd/goimports@latest",
        "go install github.com/go-chi/chi/v5@latest",
        "go get gopkg.in/yaml.v3",
        "go get github.com/spf13/cobra-cli",
        "go get github.com/gin-gonic/gni",
        "go get golang.org/x/sync golang.org/x/sys",
        "go get github.com/gofrs/uuid github.com/google/uuid",
        "go get github.com/redis/go-redis/v9",
        "go run .",
        "go run ./cmd/server",
        "go run main.go",
        "go build ./...",
        "go get -u ./...",
        "go mod tidy",
    ] {
        assert_eq!(typosquat(cmd), None, "{cmd}: {:?}", analyse(cmd));
    }
}
