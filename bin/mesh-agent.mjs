#!/usr/bin/env node
import "../dist/mesh-agent/main.mjs"
