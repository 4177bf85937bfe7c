#!/usr/bin/env node
import "../dist/meshctl/main.mjs"
