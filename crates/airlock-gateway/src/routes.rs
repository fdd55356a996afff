//! A router builder that remembers every (method, path) it registers, so the OpenAPI document
//! can be checked against the routes the server really serves.

use axum::Router;
use axum::routing::MethodRouter;

use crate::state::AppState;

/// Routes being registered, and the list of them.
pub struct Routes {
    router: Router<AppState>,
    list: Vec<(&'static str, &'static str)>,
}

impl Default for Routes {
    fn default() -> Self {
        Self::new()
    }
}

impl Routes {
    pub fn new() -> Routes {
        Routes {
            router: Router::new(),
            list: Vec::new(),
        }
    }

    /// Registers `mr` at `path`; `methods` names the methods `mr` answers (uppercase).
    pub fn add(
        mut self,
        methods: &[&'static str],
        path: &'static str,
        mr: MethodRouter<AppState>,
    ) -> Routes {
        self.router = self.router.route(path, mr);
        self.list.extend(methods.iter().map(|m| (*m, path)));
        self
    }

    pub fn list(&self) -> &[(&'static str, &'static str)] {
        &self.list
    }

    pub fn into_parts(self) -> (Router<AppState>, Vec<(&'static str, &'static str)>) {
        (self.router, self.list)
    }
}
