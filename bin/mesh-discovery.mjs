#!/usr/bin/env node
import "../dist/mesh-discovery/main.mjs"
