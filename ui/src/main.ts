import { mount } from 'svelte';
import './app.css';
import App from './App.svelte';
import { adoptToken } from './lib/token';

adoptToken();
const target = document.getElementById('app');
if (target) mount(App, { target });
